// Package guard runs one of check-repo.sh's Go guards: it reads the
// NUL-separated file list check-repo.sh pipes in, checks those files of the
// working directory, prints each problem and exits 1 when there is one.
package guard

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
)

// Main runs check over the files listed on standard input.
func Main(check func(fsys fs.FS, files []string) []string) {
	list, err := io.ReadAll(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "check-repo: read the file list:", err)
		os.Exit(1)
	}
	var files []string
	for f := range strings.SplitSeq(string(list), "\x00") {
		if f = strings.TrimSpace(f); f != "" {
			files = append(files, f)
		}
	}
	problems := check(os.DirFS("."), files)
	for _, p := range problems {
		fmt.Fprintln(os.Stderr, "check-repo:", p)
	}
	if len(problems) > 0 {
		os.Exit(1)
	}
}
