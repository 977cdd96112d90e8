// Package export writes the files staff download (sales, ledger
// statements, manifests) as CSV a spreadsheet opens as it is: UTF-8 with a
// byte-order mark, so Bengali names stay intact; CRLF line ends; and cells
// typed by people guarded so none is run as a formula (CSV injection). A
// file is written a row at a time to any writer, so a large one can go out
// in pieces as it is read.
package export

import (
	"encoding/csv"
	"fmt"
	"io"
	"strings"
)

// CSV writes one file's rows.
type CSV struct {
	w *csv.Writer
}

// NewCSV starts a file on w with its byte-order mark and header row.
func NewCSV(w io.Writer, header []string) (*CSV, error) {
	if _, err := io.WriteString(w, "\ufeff"); err != nil {
		return nil, fmt.Errorf("start the file: %w", err)
	}
	c := &CSV{w: csv.NewWriter(w)}
	c.w.UseCRLF = true // what spreadsheets expect of a CSV file
	if err := c.w.Write(header); err != nil {
		return nil, fmt.Errorf("write the header: %w", err)
	}
	return c, nil
}

// Row writes one row; cells a person typed go through Text first.
func (c *CSV) Row(cells ...string) error {
	if err := c.w.Write(cells); err != nil {
		return fmt.Errorf("write a row: %w", err)
	}
	return nil
}

// Flush writes what is buffered to the writer underneath.
func (c *CSV) Flush() error {
	c.w.Flush()
	if err := c.w.Error(); err != nil {
		return fmt.Errorf("write the file: %w", err)
	}
	return nil
}

// Text keeps a spreadsheet from reading what a person typed (a name, a
// reason) as a formula: a cell that starts with =, +, -, @ or a tab or
// carriage return gets a leading quote. Numbers the platform writes are
// not passed through it, so a negative amount stays a number.
func Text(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

// Pieces is a writer that hands what is written to send in pieces of at
// least size bytes (the last may be smaller, on Flush): a file streamed
// as messages of a server stream, each a copy the caller may keep.
type Pieces struct {
	send func([]byte) error
	size int
	buf  []byte
}

// NewPieces returns a writer that sends pieces of size bytes.
func NewPieces(size int, send func([]byte) error) *Pieces {
	return &Pieces{send: send, size: size, buf: make([]byte, 0, size)}
}

// Write buffers p and sends every full piece.
func (p *Pieces) Write(b []byte) (int, error) {
	p.buf = append(p.buf, b...)
	if len(p.buf) >= p.size {
		if err := p.Flush(); err != nil {
			return 0, err
		}
	}
	return len(b), nil
}

// Flush sends what is buffered, if anything.
func (p *Pieces) Flush() error {
	if len(p.buf) == 0 {
		return nil
	}
	piece := p.buf
	p.buf = make([]byte, 0, p.size)
	return p.send(piece)
}
