package config

import (
	"embed"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"reflect"
	"strings"

	"github.com/scanwarden/scanwarden/installed"
)

// sections are this package's files that declare the file's sections: each
// key's meaning is its field's comment there, so the manual page cannot
// drift from the definitions (TestConfigKeysDocumented: every key has one).
//
//go:embed config.go checks.go snmp.go ad.go eventlog.go notify.go receiver.go web.go warnings.go
var sections embed.FS

// Key is one key of the config file, as scanwarden.toml(5) lists it.
type Key struct {
	Section string // "" for the top level, else "checks", "snmp", …
	Key     string
	Default string // as written in the file ("" shown as "")
	Meaning string
}

// Name is the dotted key ("checks.interval").
func (k Key) Name() string {
	if k.Section == "" {
		return k.Key
	}
	return k.Section + "." + k.Key
}

// fieldDocs reads the section files' struct field comments: type → field →
// text.
func fieldDocs() (map[string]map[string]string, error) {
	files, err := fs.Glob(sections, "*.go")
	if err != nil {
		return nil, err
	}
	out := map[string]map[string]string{}
	for _, name := range files {
		src, err := sections.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", name, err)
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, src, parser.ParseComments)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", name, err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok {
				return true
			}
			st, ok := ts.Type.(*ast.StructType)
			if !ok {
				return false
			}
			docs := map[string]string{}
			for _, fld := range st.Fields.List {
				text := strings.TrimSpace(fld.Doc.Text() + " " + fld.Comment.Text())
				text = strings.Join(strings.Fields(text), " ")
				for _, name := range fld.Names {
					docs[name.Name] = text
				}
			}
			out[ts.Name.Name] = docs
			return false
		})
	}
	return out, nil
}

// Keys lists every key of the file with its default (Defaults) and
// its meaning (the field's comment), in the order of the structs.
func Keys() ([]Key, error) {
	docs, err := fieldDocs()
	if err != nil {
		return nil, err
	}
	var keys []Key
	var walk func(section string, t reflect.Type, v reflect.Value)
	walk = func(section string, t reflect.Type, v reflect.Value) {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			tag, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
			if tag == "" || tag == "-" {
				continue
			}
			if f.Type.Kind() == reflect.Struct && f.Type != reflect.TypeOf(Duration(0)) {
				walk(tag, f.Type, v.Field(i))
				continue
			}
			meaning := docs[t.Name()][f.Name]
			if strings.HasPrefix(meaning, f.Name+" ") || strings.HasPrefix(meaning, f.Name+":") {
				// "MaxConcurrent is the cap …": the key's own name instead.
				meaning = tag + meaning[len(f.Name):]
			}
			keys = append(keys, Key{Section: section, Key: tag, Default: tomlValue(v.Field(i)), Meaning: meaning})
		}
	}
	walk("", reflect.TypeOf(Config{}), reflect.ValueOf(Defaults()))
	return keys, nil
}

// tomlValue writes a default as it would stand in the file.
func tomlValue(v reflect.Value) string {
	switch x := v.Interface().(type) {
	case Duration:
		if x == 0 {
			return `"0s"`
		}
		return fmt.Sprintf("%q", x.D().String())
	case string:
		return fmt.Sprintf("%q", x)
	case []string:
		parts := make([]string, len(x))
		for i, s := range x {
			parts[i] = fmt.Sprintf("%q", s)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return fmt.Sprint(v.Interface())
}

// WriteMan writes scanwarden.toml(5) as roff.
func WriteMan(w io.Writer, version string) error {
	keys, err := Keys()
	if err != nil {
		return err
	}
	esc := func(s string) string {
		s = strings.ReplaceAll(s, `\`, `\e`)
		s = strings.ReplaceAll(s, "-", `\-`)
		if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
			s = `\&` + s
		}
		return s
	}
	var b strings.Builder
	fmt.Fprintf(&b, ".TH SCANWARDEN.TOML 5 \"\" \"scanwarden %s\" \"File Formats\"\n", strings.NewReplacer(`"`, "", `\`, "").Replace(version))
	b.WriteString(".SH NAME\nscanwarden.toml \\- the configuration of scanwarden serve\n")
	b.WriteString(".SH SYNOPSIS\n.I " + installed.ConfigFile + "\n(on an installed box; \\fBscanwarden serve \\-\\-config\\fR \\fIFILE\\fR elsewhere)\n")
	b.WriteString(".SH DESCRIPTION\nOne TOML file. Every key has a default, so no file at all is a working setup; " +
		"an unknown key or a bad value is an error naming the key and its line (\\fBscanwarden serve \\-\\-check\\-config\\fR only validates). " +
		"SIGHUP reloads it; a bad file keeps the running configuration. A value of 0 means 0. Secrets never stand in the file: " +
		"the *_file keys name a file that holds them. Settings saved from the web page apply where the file does not set the key.\n")
	section := "-"
	for _, k := range keys {
		if k.Section != section {
			section = k.Section
			if section == "" {
				b.WriteString(".SH TOP-LEVEL KEYS\n")
			} else {
				fmt.Fprintf(&b, ".SH [%s]\n", esc(section))
			}
		}
		fmt.Fprintf(&b, ".TP\n.B %s\n(default: %s) %s\n", esc(k.Key), esc(k.Default), esc(k.Meaning))
	}
	b.WriteString(".SH SEE ALSO\n\\fBscanwarden\\fR(8)\n")
	_, err = io.WriteString(w, b.String())
	return err
}
