package web

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// hostGuard answers only requests whose Host names this site: a name or
// address of the box, or one the admin listed ([web] hosts). Another name
// is DNS rebinding: a page of the attacker's, whose name now resolves to
// this box (or to the loopback end of an SSH tunnel to it), reading the
// site as same-origin. hosts is lower case, without a port; loopback
// addresses and "localhost" always pass, and so does /healthz (a monitor
// may ask by any name; it tells nothing).
func hostGuard(hosts []string, next http.Handler) http.Handler {
	allowed := make(map[string]bool, len(hosts))
	for _, h := range hosts {
		allowed[normHost(h)] = true
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := normHost(r.Host)
		if allowed[h] || h == "localhost" || isLoopback(h) || r.URL.Path == "/healthz" {
			next.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusMisdirectedRequest)
		w.Write([]byte("this site does not answer to the name " + quoteHost(h) +
			": open it by the box's name or address, or add the name to [web] hosts in scanwarden.toml\n"))
	})
}

// normHost is a Host header's name or address: no port, no brackets, lower
// case, no trailing dot.
func normHost(h string) string {
	if host, _, err := net.SplitHostPort(h); err == nil {
		h = host
	}
	h = strings.TrimSuffix(strings.Trim(h, "[]"), ".")
	if a, err := netip.ParseAddr(h); err == nil {
		return a.Unmap().WithZone("").String()
	}
	return strings.ToLower(h)
}

func isLoopback(h string) bool {
	a, err := netip.ParseAddr(h)
	return err == nil && a.IsLoopback()
}

// quoteHost quotes a client's Host for the answer: printable ASCII only.
func quoteHost(h string) string {
	var b strings.Builder
	for _, c := range []byte(h) {
		if c < 0x21 || c > 0x7e || c == '"' || c == '<' || c == '>' || c == '&' {
			c = '?'
		}
		b.WriteByte(c)
	}
	if b.Len() > 100 {
		return `"` + b.String()[:100] + `…"`
	}
	return `"` + b.String() + `"`
}
