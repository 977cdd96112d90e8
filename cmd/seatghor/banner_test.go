package main

import (
	"bytes"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/internal/devenv/demo"
	"github.com/seatghor/seatghor/server/app"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/keyset"
)

// TestDevBannerSaysWherePartnersStart: `make run`'s banner names the
// section of docs/partners.md a partner starts from (which must exist),
// the demo shows' organisation a partner is allowed to sell, and mints
// partner tokens only with the partner they act for (issue 29, item 7).
func TestDevBannerSaysWherePartnersStart(t *testing.T) {
	tokens, err := auth.NewTokens(keyset.FromSecret(devSecret, keyset.Tokens), time.Now)
	require.NoError(t, err)
	var out bytes.Buffer
	require.NoError(t, printTour(&out, &app.App{Tokens: tokens}, "127.0.0.1:8080", "127.0.0.1:9090", "http://127.0.0.1:8081"))
	banner := out.String()

	m := regexp.MustCompile(`(?m)^Partners start at:\s+docs/partners\.md, "([^"]+)" \(the demo shows' organisation: (\S+)\)$`).FindStringSubmatch(banner)
	require.NotNil(t, m, "the banner says where a partner starts:\n%s", banner)
	partners, err := os.ReadFile("../../docs/partners.md")
	require.NoError(t, err)
	require.Contains(t, strings.Split(string(partners), "\n"), "## "+m[1], "docs/partners.md has the section the banner names")
	require.Equal(t, demo.Organization, m[2])
	require.Contains(t, banner, `"allowed_organization_ids": ["`+demo.Organization+`"]`)

	for _, line := range strings.Split(banner, "\n") {
		if strings.Contains(line, "--role partner") {
			require.Contains(t, line, "--partner ", "a partner token names its partner")
		}
	}
	require.Contains(t, banner, "bin/seatghor token --sub nadia --role partner --partner PARTNER_ID")
}
