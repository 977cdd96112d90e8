package seatghor

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

// TestReadmeNamesEveryService: the README says what the SDK covers, so it
// names every field of Client (one per service of proto/, generated).
func TestReadmeNamesEveryService(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	fields := reflect.VisibleFields(reflect.TypeFor[Client]())
	if len(fields) < 12 {
		t.Fatalf("Client has %d fields", len(fields))
	}
	for _, f := range fields {
		if !strings.Contains(string(readme), "`"+f.Name+"`") {
			t.Errorf("README.md does not name the service field %s", f.Name)
		}
	}
}
