package control

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
)

// Found is a live proxy found through its control socket.
type Found struct {
	Conn  *Conn
	State State
}

// Find reads every control socket in the runtime dir but except's (a path,
// or ""), oldest kernel first, removing those whose proxy died and saying
// so on w. skipped counts the sockets it could not read (refused or not
// answering), each told on w.
func Find(dir, except string, w io.Writer) (found []Found, skipped int, err error) {
	paths, err := filepath.Glob(filepath.Join(dir, SocketPattern))
	if err != nil {
		return nil, 0, fmt.Errorf("control sockets in %s: %w", dir, err)
	}
	for _, p := range paths {
		if p == except {
			continue
		}
		c, err := Open(p)
		if err != nil {
			fmt.Fprintf(w, "skipped %s: %v\n", p, err)
			skipped++
			continue
		}
		st, err := c.State()
		if errors.Is(err, ErrStale) {
			if os.Remove(p) == nil {
				fmt.Fprintf(w, "removed %s: its proxy is gone\n", filepath.Base(p))
			}
			continue
		}
		if err != nil {
			fmt.Fprintf(w, "skipped %s: %v\n", p, err)
			skipped++
			continue
		}
		found = append(found, Found{c, st})
	}
	sort.Slice(found, func(i, j int) bool { return found[i].State.Started.Before(found[j].State.Started) })
	return found, skipped, nil
}
