package web

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	scanwarden "github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/registry"
	"github.com/scanwarden/scanwarden/smbcheck"
	"github.com/scanwarden/scanwarden/snmp"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// views holds one parsed template per page (layout + the page's file).
type views struct {
	pages    map[string]*template.Template
	codebook *snmp.CodeBook
}

func parseViews() (*views, error) {
	cb := snmp.DefaultCodeBook()
	funcs := template.FuncMap{
		"ago":      ago,
		"when":     func(t time.Time) string { return formatWhen(t) },
		"ms":       func(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) + " ms" },
		"evidence": formatEvidence,
		"status":   statusClass,
		"verdict":  verdictClass,
		"explain": func(code string) *snmp.CodeEntry {
			if e, ok := cb.Lookup(code); ok {
				return &e
			}
			return nil
		},
		"size":           formatSize,
		"shown":          scanwarden.Visible,
		"pathseg":        url.PathEscape,
		"join":           strings.Join,
		"add":            func(a, b int) int { return a + b },
		"deref":          func(t *time.Time) time.Time { return derefTime(t) },
		"unc":            func(d registry.DestinationView) string { return scanwarden.UNC(d.Host, d.Share, d.Path) },
		"oddport":        func(d registry.DestinationView) bool { return scanwarden.NonDefaultPort(d.Port) },
		"profileLabel":   profileLabel,
		"profileChoices": profileChoices,
	}
	// layout.html and the partials (templates/_*.html: sections a page
	// embeds with {{template "name" .}}) are in every page's set.
	layout, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/_*.html")
	if err != nil {
		return nil, err
	}
	files, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		return nil, err
	}
	v := &views{pages: map[string]*template.Template{}, codebook: cb}
	for _, f := range files {
		name := strings.TrimSuffix(strings.TrimPrefix(f, "templates/"), ".html")
		if name == "layout" || strings.HasPrefix(name, "_") {
			continue
		}
		t, err := template.Must(layout.Clone()).ParseFS(templateFS, f)
		if err != nil {
			return nil, fmt.Errorf("view %s: %w", name, err)
		}
		v.pages[name] = t
	}
	return v, nil
}

// pageData is what every page's layout reads.
type pageData struct {
	Title    string
	Nav      string // the highlighted menu entry
	LoggedIn bool
	Flash    string // one line of feedback after a POST
	Error    string
	Data     any
}

// render executes a view into a buffer and only then writes it, so a
// template error is a clean 500, never half a page.
func (s *base) render(w http.ResponseWriter, status int, name string, p pageData) {
	t := s.views.pages[name]
	if t == nil {
		s.log.Error("render: no view", "view", name)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout.html", p); err != nil {
		s.log.Error("render", "view", name, "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// fail answers a page request whose backend call failed.
func (s *base) fail(w http.ResponseWriter, r *http.Request, what string, err error) {
	status := http.StatusInternalServerError
	msg := "Could not read " + what + ". The daemon's log has the details."
	switch {
	case errors.Is(err, ErrNotFound):
		status, msg = http.StatusNotFound, "No such "+what+"."
	case errors.Is(err, ErrNotRunning):
		status, msg = http.StatusServiceUnavailable, "The "+what+" part is not running."
	default:
		s.log.Error("backend", "what", what, "path", r.URL.Path, "err", err)
	}
	s.render(w, status, "error", pageData{Title: "Error", LoggedIn: true, Error: msg})
}

// ErrNotRunning is a backend's answer when its part of the daemon is not
// running (the receiver is off, the monitor is stopping): pages say so,
// the API answers 503.
var ErrNotRunning = errors.New("not running")

// writeJSON renders into a buffer first, like the pages.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		writeAPIError(w, http.StatusInternalServerError, "internal error")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)+1))
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

func writeAPIError(w http.ResponseWriter, status int, msg string) {
	b, _ := json.Marshal(map[string]string{"error": msg})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

func staticHandler() http.Handler {
	sub, _ := fs.Sub(staticFS, "static")
	fsrv := http.StripPrefix("/static/", http.FileServerFS(sub))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=3600")
		fsrv.ServeHTTP(w, r)
	})
}

func ago(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	d := time.Since(t)
	switch {
	case d < 0:
		return "just now"
	case d < time.Minute:
		return strconv.Itoa(int(d.Seconds())) + " s ago"
	case d < time.Hour:
		return strconv.Itoa(int(d.Minutes())) + " min ago"
	case d < 48*time.Hour:
		return strconv.Itoa(int(d.Hours())) + " h ago"
	default:
		return strconv.Itoa(int(d.Hours()/24)) + " days ago"
	}
}

func formatWhen(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.Local().Format("2006-01-02 15:04:05")
}

func derefTime(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return *t
}

func formatSize(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return strconv.FormatInt(n, 10) + " B"
}

// statusClass maps a step status to a CSS class.
func statusClass(s smbcheck.Status) string {
	switch s {
	case smbcheck.StatusOK:
		return "ok"
	case smbcheck.StatusWarn:
		return "warn"
	case smbcheck.StatusFail:
		return "bad"
	}
	return "muted"
}

// verdictClass maps a last check to a CSS class ("" never checked).
func verdictClass(c *registry.ReportView) string {
	if c == nil {
		return "muted"
	}
	if c.Verdict.Cause == scanwarden.CauseOK {
		return "ok"
	}
	return "bad"
}

// formatEvidence is smbcheck.FormatEvidence that also reads a stored
// report, whose values came back from JSON (a user-name form is a map).
func formatEvidence(ev smbcheck.Evidence) string {
	plain := make(smbcheck.Evidence, len(ev))
	for k, v := range ev {
		switch x := v.(type) {
		case map[string]any:
			if t, ok := x["typed"].(string); ok {
				v = t
			} else if b, err := json.Marshal(x); err == nil {
				v = string(b)
			}
		case []any:
			parts := make([]string, 0, len(x))
			for _, p := range x {
				parts = append(parts, fmt.Sprint(p))
			}
			v = parts
		}
		plain[k] = v
	}
	return smbcheck.FormatEvidence(plain)
}
