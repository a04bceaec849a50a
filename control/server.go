package control

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"syscall"
	"time"
)

// Server serves one proxy's control socket.
type Server struct {
	path string
	http *http.Server
	ln   net.Listener
}

type peerKey struct{}

// Listen creates the socket at path (mode 0600) and serves k on it.
func Listen(path string, k Kernel, logger *log.Logger) (*Server, error) {
	_ = os.Remove(path) // a socket left by a proxy that was killed
	old := syscall.Umask(0o177)
	ln, err := net.Listen("unix", path)
	syscall.Umask(old)
	if err != nil {
		return nil, fmt.Errorf("control socket %s: %w", path, err)
	}
	s := &Server{path: path, ln: ln}
	s.http = &http.Server{
		Handler:           ownerOnly(routes(k)),
		ReadHeaderTimeout: 5 * time.Second,
		ErrorLog:          logger,
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			return context.WithValue(ctx, peerKey{}, peerUID(c))
		},
	}
	go func() {
		if err := s.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Printf("control socket %s: %v", path, err)
		}
	}()
	return s, nil
}

// Close stops serving and removes the socket.
func (s *Server) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = s.http.Shutdown(ctx)
	_ = os.Remove(s.path)
}

// peerUID is the uid of the process at the other end (SO_PEERCRED), or -1.
func peerUID(c net.Conn) int {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return -1
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return -1
	}
	uid := -1
	_ = raw.Control(func(fd uintptr) {
		if cred, err := syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED); err == nil {
			uid = int(cred.Uid)
		}
	})
	return uid
}

// ownerOnly refuses every peer whose uid is not ours: the socket's mode
// already says so, but a directory with looser rights must not open it up.
func ownerOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if uid, _ := r.Context().Value(peerKey{}).(int); uid != os.Getuid() {
			writeJSON(w, http.StatusForbidden, apiError{Error: fmt.Sprintf("uid %d is not the owner of this kernel", uid)})
			return
		}
		h.ServeHTTP(w, r)
	})
}

func routes(k Kernel) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/state", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, k.State())
	})
	mux.HandleFunc("GET /v1/cells", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, k.Cells())
	})
	mux.HandleFunc("GET /v1/history", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, k.History())
	})
	for path, act := range map[string]func() error{
		"POST /v1/resume":    k.Resume,
		"POST /v1/interrupt": k.Interrupt,
		"POST /v1/restart":   k.Restart,
	} {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			if err := act(); err != nil {
				writeJSON(w, http.StatusConflict, apiError{Error: err.Error()})
				return
			}
			writeJSON(w, http.StatusOK, k.State())
		})
	}
	return mux
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(append(mustJSON(v), '\n'))
}
