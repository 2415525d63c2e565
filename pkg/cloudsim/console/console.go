// Package console is cloudsim's read-only web console: one page of plain
// HTML, CSS and JavaScript embedded in the binary (no build step, nothing
// fetched from elsewhere) that polls a JSON snapshot of the simulated
// clouds once a second and draws it. It is mounted on the admin listener
// only, under /admin/console, and the page says so: like the rest of the
// admin API it is unauthenticated.
package console

import (
	"embed"
	"encoding/json"
	"io/fs"
	"net/http"
)

// Path is where the page is served; its assets and state are under it.
const Path = "/admin/console"

// StatePath answers the snapshot the page draws, as JSON.
const StatePath = Path + "/state"

//go:embed assets
var assets embed.FS

// Register mounts the page (GET /admin/console), its assets
// (GET /admin/console/assets/...) and the snapshot (GET
// /admin/console/state, what state returns, as JSON) on mux, which must
// be the admin listener's.
func Register(mux *http.ServeMux, state func() any) {
	files, err := fs.Sub(assets, "assets")
	if err != nil {
		panic(err) // cannot happen: the directory is embedded
	}
	page, err := fs.ReadFile(files, "index.html")
	if err != nil {
		panic(err)
	}
	mux.Handle("GET "+Path, adminOnly(func(w http.ResponseWriter, _ *http.Request) {
		secure(w)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write(page)
	}))
	mux.Handle("GET "+Path+"/{$}", adminOnly(http.RedirectHandler(Path, http.StatusMovedPermanently).ServeHTTP))
	static := http.StripPrefix(Path+"/assets/", http.FileServerFS(files))
	mux.Handle("GET "+Path+"/assets/", adminOnly(func(w http.ResponseWriter, r *http.Request) {
		secure(w)
		static.ServeHTTP(w, r)
	}))
	mux.Handle("GET "+StatePath, adminOnly(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		_ = json.NewEncoder(w).Encode(state())
	}))
}

// adminOnly answers 404 to a request that came through one of cloudsim's
// TLS tunnels to the real API hostnames (package tunnel): the console is
// the admin listener's (plain HTTP, the address cloudsim --listen names),
// not part of an emulated API endpoint.
func adminOnly(f http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS != nil {
			http.Error(w, "cloudsim: the console is served on the admin listener only (http://<--listen>"+Path+"), not through an API tunnel", http.StatusNotFound)
			return
		}
		f(w, r)
	})
}

// secure keeps the page to its own origin: no inline script, nothing
// loaded from elsewhere, no framing (names and tags it shows come from API
// callers).
func secure(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
}
