// Package web is the buyer's site and the gate page as built files: the
// TypeScript app under src/ is built into dist/ (committed, decision 0160)
// and embedded here so the binary needs no Node.js. The server's
// server/site serves it; this package imports nothing of the server.
package web

import (
	"embed"
	"io/fs"
)

//go:embed dist
var dist embed.FS

// Dist returns the built site, rooted at dist/ (index.html at its top).
func Dist() (fs.FS, error) {
	return fs.Sub(dist, "dist")
}
