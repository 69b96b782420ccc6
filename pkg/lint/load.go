package lint

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
)

// Load reads manifests from files, directories (recursively: *.yaml, *.yml,
// *.json; a FIFO or device there is skipped and reported as skipped) and "-"
// (stdin). A file that cannot be read or parsed is reported
// and the others are still loaded; objects before a syntax error in a file
// are kept.
func Load(paths []string, stdin io.Reader) (docs []snapshot.Located, files int, errs []FileError) {
	var list []string
	for _, p := range paths {
		if p == "-" {
			list = append(list, p)
			continue
		}
		st, err := os.Stat(p)
		if err != nil {
			errs = append(errs, FileError{File: p, Message: oneLine(err)})
			continue
		}
		if !st.IsDir() {
			list = append(list, p)
			continue
		}
		var found []string
		err = filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && strings.HasPrefix(d.Name(), ".") && q != p {
				return filepath.SkipDir
			}
			switch strings.ToLower(filepath.Ext(q)) {
			case ".yaml", ".yml", ".json":
				if d.IsDir() {
					break
				}
				// A FIFO or device named like a manifest would block or
				// never end: skip it and say so.
				if why := snapshot.NotRegular(q); why != "" {
					errs = append(errs, FileError{File: q, Message: why, Skipped: true})
					break
				}
				found = append(found, q)
			}
			return nil
		})
		if err != nil {
			errs = append(errs, FileError{File: p, Message: oneLine(err)})
		}
		sort.Strings(found)
		list = append(list, found...)
	}
	for _, p := range list {
		files++
		var r io.Reader = stdin
		if p != "-" {
			f, err := snapshot.OpenInput(p)
			if err != nil {
				errs = append(errs, FileError{File: p, Message: oneLine(err)})
				continue
			}
			r = f
			defer f.Close()
		}
		located, _, err := snapshot.Decode(p, r)
		docs = append(docs, located...)
		if err != nil {
			fe := FileError{File: p, Message: oneLine(err)}
			var pe *snapshot.ParseError
			if errors.As(err, &pe) {
				fe.Line, fe.Message = pe.Line, oneLine(pe.Err)
			}
			errs = append(errs, fe)
		}
	}
	return docs, files, errs
}

func oneLine(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}
