//go:build !chaosbroken

package payment

// storedEventID is the key a webhook event is stored under: the gateway's
// event id, so a redelivery is a no-op. Only the chaos run's
// deliberately broken build (build tag chaosbroken, decision 0411) can
// store it under another.
func storedEventID(eventID string) string { return eventID }
