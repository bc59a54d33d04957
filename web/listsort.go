package web

import (
	"cmp"
	"net/url"
	"slices"
	"strings"
)

// column is one sortable column of a list page's table.
type column struct {
	Key, Label string
	Href       string // the list sorted by this column (the other way when it is the current one)
	Current    bool
	Desc       bool
	Wide       bool // hidden on a phone
}

// sortable is a list page's column and the key it sorts the rows by.
type sortable[T any] struct {
	column
	key func(T) string
}

// sortList sorts rows by the column that ?sort=KEY names (def when none
// or an unknown one; ?desc=1 reverses it), the name breaking ties, and
// gives the columns with their links.
func sortList[T any](q url.Values, path, def string, rows []T, name func(T) string, cols []sortable[T]) []column {
	plain := make([]column, 0, len(cols))
	keys := map[string]func(T) string{}
	for _, c := range cols {
		plain = append(plain, c.column)
		keys[c.Key] = c.key
	}
	key, desc, out := listSort(q, path, def, plain)
	sortBy(rows, desc, keys[key], name)
	return out
}

// listSort reads ?sort=KEY&desc=1 (KEY one of keys, else def) and gives the
// columns' links.
func listSort(q url.Values, path, def string, cols []column) (key string, desc bool, out []column) {
	key, desc = q.Get("sort"), q.Get("desc") == "1"
	if !slices.ContainsFunc(cols, func(c column) bool { return c.Key == key }) {
		key, desc = def, false
	}
	for _, c := range cols {
		v := url.Values{"sort": {c.Key}}
		if c.Key == key {
			c.Current, c.Desc = true, desc
			if !desc {
				v.Set("desc", "1")
			}
		}
		c.Href = path + "?" + v.Encode()
		out = append(out, c)
	}
	return key, desc, out
}

// sortBy sorts xs by the key the function gives for each (strings compare
// without regard to case), the name breaking ties; desc reverses.
func sortBy[T any](xs []T, desc bool, key func(T) string, name func(T) string) {
	slices.SortStableFunc(xs, func(a, b T) int {
		c := cmp.Compare(strings.ToLower(key(a)), strings.ToLower(key(b)))
		if c == 0 {
			c = cmp.Compare(strings.ToLower(name(a)), strings.ToLower(name(b)))
		}
		if desc {
			return -c
		}
		return c
	})
}
