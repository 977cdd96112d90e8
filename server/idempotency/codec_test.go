package idempotency_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/server/idempotency"
)

type shortage struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

func (e *shortage) Error() string { return e.Message }

type refusal struct {
	Reason string `json:"reason"`
}

func (e *refusal) Error() string { return e.Reason }

func TestErrorsOf(t *testing.T) {
	c := idempotency.ErrorsOf[shortage]("test")
	raw, ok := c.EncodeError(fmt.Errorf("hold: %w", &shortage{Kind: "unavailable", Message: "A2 is taken"}))
	require.True(t, ok)
	require.JSONEq(t, `{"kind":"unavailable","message":"A2 is taken"}`, string(raw), "the error as it is, wrapping stripped")
	var got *shortage
	require.ErrorAs(t, c.DecodeError(raw), &got)
	require.Equal(t, shortage{Kind: "unavailable", Message: "A2 is taken"}, *got)

	_, ok = c.EncodeError(errors.New("connection reset"))
	require.False(t, ok, "an infrastructure error is not recorded: a retry does the work")
	require.Error(t, c.DecodeError([]byte("{")))
}

func TestUnion(t *testing.T) {
	c := idempotency.Union(map[string]idempotency.Codec{
		"booking": idempotency.ErrorsOf[shortage]("booking"),
		"payment": idempotency.ErrorsOf[refusal]("payment"),
	})
	for _, err := range []error{&shortage{Kind: "k", Message: "m"}, &refusal{Reason: "r"}} {
		raw, ok := c.EncodeError(err)
		require.True(t, ok)
		require.Equal(t, err, c.DecodeError(raw))
	}
	raw, _ := c.EncodeError(&refusal{Reason: "r"})
	require.JSONEq(t, `{"payment":{"reason":"r"}}`, string(raw), "tagged by domain")
	_, ok := c.EncodeError(errors.New("timeout"))
	require.False(t, ok)
	require.Error(t, c.DecodeError([]byte(`{"ledger":{}}`)))
}
