// Command sdkrelease builds the SDKs' release into one directory (`make
// sdk`, decision 0328), until the Go module path is fetchable and the npm
// package is published:
//
//   - seatghor-client-VERSION.tgz, the TypeScript client's npm tarball
//     (npm pack of clients/ts): `npm install ./seatghor-client-VERSION.tgz`;
//   - go/, a Go module proxy directory holding the Go SDK
//     (clients/go/seatghor) as module version vVERSION: its .zip (made by
//     golang.org/x/mod/zip, as the Go command makes them), .mod, .info and
//     the list of versions, for GOPROXY=file://…/go;
//   - go.sum, the module's two go.sum lines (the hashes the Go command
//     checks the zip and its go.mod against);
//   - SHA256SUMS, the SHA-256 of every file above (sha256sum -c).
//
// VERSION is clients/ts/package.json's: the two SDKs are released together.
// Run from the repository's tools directory:
//
//	go run -C tools ./sdkrelease -out ../dist/sdk [-npm=false]
package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
	"golang.org/x/mod/sumdb/dirhash"
	modzip "golang.org/x/mod/zip"
)

func main() {
	out := flag.String("out", "", "the directory to write the release to (made anew)")
	withNPM := flag.Bool("npm", true, "also pack the TypeScript client (needs npm and clients/ts/node_modules)")
	flag.Parse()
	if err := run(*out, *withNPM); err != nil {
		fmt.Fprintln(os.Stderr, "sdkrelease:", err)
		os.Exit(1)
	}
}

func run(out string, withNPM bool) error {
	if out == "" {
		return errors.New("needs -out")
	}
	root, err := repositoryRoot()
	if err != nil {
		return err
	}
	version, err := npmVersion(filepath.Join(root, "clients", "ts", "package.json"))
	if err != nil {
		return err
	}
	if out, err = filepath.Abs(out); err != nil {
		return err
	}
	if err := fresh(out); err != nil {
		return err
	}
	if withNPM {
		if err := packNPM(filepath.Join(root, "clients", "ts"), out); err != nil {
			return err
		}
	}
	if err := packGo(root, filepath.Join(root, "clients", "go", "seatghor"), "v"+version, out); err != nil {
		return err
	}
	return writeSums(out)
}

// repositoryRoot is the directory above this module's (tools/).
func repositoryRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	root := filepath.Dir(wd)
	if _, err := os.Stat(filepath.Join(root, "clients", "go", "seatghor", "go.mod")); err != nil {
		return "", fmt.Errorf("run from the repository's tools directory (go run -C tools ./sdkrelease): %w", err)
	}
	return root, nil
}

// npmVersion reads the package's version, which must be a release
// version (MAJOR.MINOR.PATCH, no pre-release) for the Go module to share.
func npmVersion(packageJSON string) (string, error) {
	b, err := os.ReadFile(packageJSON)
	if err != nil {
		return "", err
	}
	var pkg struct{ Version string }
	if err := json.Unmarshal(b, &pkg); err != nil {
		return "", fmt.Errorf("%s: %w", packageJSON, err)
	}
	if v := "v" + pkg.Version; !semver.IsValid(v) || semver.Canonical(v) != v || semver.Prerelease(v) != "" {
		return "", fmt.Errorf("%s: version %q is no MAJOR.MINOR.PATCH release", packageJSON, pkg.Version)
	}
	return pkg.Version, nil
}

// fresh empties out for the release: it must be missing, empty or an
// earlier release (it has SHA256SUMS), never some other directory.
func fresh(out string) error {
	entries, err := os.ReadDir(out)
	if errors.Is(err, fs.ErrNotExist) {
		return os.MkdirAll(out, 0o755)
	}
	if err != nil {
		return err
	}
	if len(entries) > 0 {
		if _, err := os.Stat(filepath.Join(out, "SHA256SUMS")); err != nil {
			return fmt.Errorf("%s holds files but no earlier release (no SHA256SUMS): not replacing it", out)
		}
	}
	if err := os.RemoveAll(out); err != nil {
		return err
	}
	return os.MkdirAll(out, 0o755)
}

// packNPM runs npm pack, whose prepack script builds dist/ first.
func packNPM(dir, out string) error {
	cmd := exec.Command("npm", "pack", "--json", "--pack-destination", out)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("npm pack in %s: %w\n%s", dir, err, stderr.Bytes())
	}
	// prepack's tsc prints nothing on success; the JSON is the last thing.
	var packed []struct{ Filename string }
	if err := json.Unmarshal(stdout[bytes.IndexByte(stdout, '['):], &packed); err != nil || len(packed) != 1 {
		return fmt.Errorf("npm pack in %s: no tarball named in %q (%v)", dir, stdout, err)
	}
	_, err = os.Stat(filepath.Join(out, packed[0].Filename))
	return err
}

// packGo writes the module proxy directory of the module in dir at
// version, and its go.sum lines.
func packGo(root, dir, version, out string) error {
	goMod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return err
	}
	path := modfile.ModulePath(goMod)
	if path == "" {
		return fmt.Errorf("%s/go.mod names no module", dir)
	}
	m := module.Version{Path: path, Version: version}
	escaped, err := module.EscapePath(path)
	if err != nil {
		return err
	}
	at := filepath.Join(out, "go", filepath.FromSlash(escaped), "@v")
	if err := os.MkdirAll(at, 0o755); err != nil {
		return err
	}
	zipFile := filepath.Join(at, version+".zip")
	if err := writeZip(zipFile, m, dir); err != nil {
		return err
	}
	info, err := json.Marshal(struct {
		Version string
		Time    time.Time `json:",omitzero"`
	}{version, committedAt(root, dir)})
	if err != nil {
		return err
	}
	for name, content := range map[string][]byte{
		version + ".mod":  goMod,
		version + ".info": append(info, '\n'),
		"list":            []byte(version + "\n"),
	} {
		if err := os.WriteFile(filepath.Join(at, name), content, 0o644); err != nil {
			return err
		}
	}
	zipHash, err := dirhash.HashZip(zipFile, dirhash.Hash1)
	if err != nil {
		return err
	}
	modHash, err := dirhash.Hash1([]string{"go.mod"}, func(string) (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(goMod)), nil
	})
	if err != nil {
		return err
	}
	sums := fmt.Sprintf("%s %s %s\n%s %s/go.mod %s\n", path, version, zipHash, path, version, modHash)
	return os.WriteFile(filepath.Join(out, "go.sum"), []byte(sums), 0o644)
}

func writeZip(name string, m module.Version, dir string) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	if err := modzip.CreateFromDir(f, m, dir); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// committedAt is when the module's directory last changed in git, the
// version's time in .info; zero (left out) outside a git checkout.
func committedAt(root, dir string) time.Time {
	cmd := exec.Command("git", "log", "-1", "--format=%cI", "--", dir)
	cmd.Dir = root
	b, err := cmd.Output()
	if err != nil {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339, strings.TrimSpace(string(b)))
	if err != nil {
		return time.Time{}
	}
	return t.UTC()
}

// writeSums writes SHA256SUMS: every file of out but itself, by path.
func writeSums(out string) error {
	var lines []string
	err := filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(out, p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		lines = append(lines, hex.EncodeToString(sum[:])+"  "+filepath.ToSlash(rel)+"\n")
		return nil
	})
	if err != nil {
		return err
	}
	slices.SortFunc(lines, func(a, b string) int { return strings.Compare(a[66:], b[66:]) })
	return os.WriteFile(filepath.Join(out, "SHA256SUMS"), []byte(strings.Join(lines, "")), 0o644)
}
