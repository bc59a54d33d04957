//go:build packager

// Command packager writes scanwarden's Debian package with nfpm. It is built
// only with -tags packager (scripts/package does), so nfpm and its
// dependencies stay out of `go build ./...` and `go test ./...`.
//
//	go run -tags packager ./internal/packager -version 0.1.0 -binary dist/build/scanwarden -out dist
//
// prints the path of dist/scanwarden_<version>_<arch>.deb.
package main

import (
	"compress/gzip"
	"errors"
	"flag"
	"fmt"
	"github.com/scanwarden/scanwarden/installed"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/goreleaser/nfpm/v2"
	_ "github.com/goreleaser/nfpm/v2/deb"
	"github.com/goreleaser/nfpm/v2/files"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "packager:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fl := flag.NewFlagSet("packager", flag.ContinueOnError)
	version := fl.String("version", "", "Debian version of the package (required)")
	binary := fl.String("binary", "", "the scanwarden binary to ship (required)")
	arch := fl.String("arch", runtime.GOARCH, "Go architecture of the binary")
	src := fl.String("src", ".", "the repository's root")
	out := fl.String("out", "dist", "folder the .deb is written to")
	man := fl.String("man", "", "folder holding scanwarden.8.gz and scanwarden.toml.5.gz (scanwarden help --man | --man-config, gzipped; required)")
	mtime := fl.Int64("mtime", 0, "Unix time stamped on every file (default: the binary's mtime), for reproducible packages")
	if err := fl.Parse(args); err != nil {
		return err
	}
	if *version == "" || *binary == "" || *man == "" {
		return errors.New("-version, -binary and -man are required")
	}
	st, err := os.Stat(*binary)
	if err != nil {
		return err
	}
	mt := st.ModTime()
	if *mtime != 0 {
		mt = time.Unix(*mtime, 0)
	}
	work, err := os.MkdirTemp("", "scanwarden-package-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	info, err := describe(*version, *arch, *binary, *src, *man, work, mt)
	if err != nil {
		return err
	}
	pkg, err := nfpm.Get("deb")
	if err != nil {
		return err
	}
	info = nfpm.WithDefaults(info)
	if err := nfpm.Validate(info); err != nil {
		return err
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	path := filepath.Join(*out, pkg.ConventionalFileName(info))
	tmp, err := os.CreateTemp(*out, ".scanwarden-*.deb")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := pkg.Package(info, tmp); err != nil {
		tmp.Close()
		return fmt.Errorf("package: %w", err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	fmt.Println(path)
	return nil
}

// describe is the package: what it ships (packageContents), what it
// needs, and the maintainer scripts (systemd/deb/).
func describe(version, arch, binary, src, man, work string, mtime time.Time) (*nfpm.Info, error) {
	in := func(p string) string { return filepath.Join(src, p) }
	contents, err := packageContents(version, binary, src, man, work, mtime)
	if err != nil {
		return nil, err
	}
	return &nfpm.Info{
		Name:          "scanwarden",
		Arch:          arch,
		Platform:      "linux",
		Version:       version,
		VersionSchema: "none",
		Section:       "net",
		Priority:      "optional",
		Maintainer:    maintainer,
		Description: "finds out why a Kyocera MFP cannot scan to its SMB folder\n" +
			"scanwarden replays an MFP's scan-to-folder (SMB) destinations as the\n" +
			"device stores them, asks Active Directory why an account cannot log on,\n" +
			"watches the MFPs over SNMP, and holds scans on a fallback share until\n" +
			"their real folder works again.",
		MTime: mtime,
		Overridables: nfpm.Overridables{
			// samba-vfs-modules: the share loads full_audit; samba only
			// recommends it, and without it smbd refuses every MFP.
			Depends:    []string{"samba", "samba-vfs-modules", "systemd-sysusers", "systemd-tmpfiles", "init-system-helpers (>= 1.54)", "passwd"},
			Recommends: []string{"smbclient"},
			Contents:   contents,
			Umask:      0o022,
			Scripts: nfpm.Scripts{
				PostInstall: in("systemd/deb/postinst"),
				PreRemove:   in("systemd/deb/prerm"),
				PostRemove:  in("systemd/deb/postrm"),
			},
			Deb: nfpm.Deb{Compression: "gzip"},
		},
	}, nil
}

// packageContents is what the package ships: the binary, the units, the
// conffile, the documentation and man pages, each with its owner, mode
// and the build's time.
func packageContents(version, binary, src, man, work string, mtime time.Time) (files.Contents, error) {
	in := func(p string) string { return filepath.Join(src, p) }
	file := func(from, to string, mode os.FileMode) *files.Content {
		return &files.Content{Source: from, Destination: to,
			FileInfo: &files.ContentFileInfo{Owner: "root", Group: "root", Mode: mode, MTime: mtime}}
	}
	contents := files.Contents{
		file(binary, "/usr/bin/scanwarden", 0o755),
		file(in("systemd/sysusers.d/scanwarden.conf"), "/usr/lib/sysusers.d/scanwarden.conf", 0o644),
		file(in("systemd/tmpfiles.d/scanwarden.conf"), "/usr/lib/tmpfiles.d/scanwarden.conf", 0o644),
		file(in("README.md"), "/usr/share/doc/scanwarden/README.md", 0o644),
		file(in("systemd/deb/copyright"), "/usr/share/doc/scanwarden/copyright", 0o644),
		// Generated from the CLI's flags and the config's definitions at
		// build time; the unit's Documentation=man:scanwarden(8) resolves.
		file(filepath.Join(man, "scanwarden.8.gz"), "/usr/share/man/man8/scanwarden.8.gz", 0o644),
		file(filepath.Join(man, "scanwarden.toml.5.gz"), "/usr/share/man/man5/scanwarden.toml.5.gz", 0o644),
	}
	// The README links to the rest of the documentation.
	docs, err := filepath.Glob(in("docs/*.md"))
	if err != nil {
		return nil, err
	}
	for _, d := range docs {
		contents = append(contents, file(d, "/usr/share/doc/scanwarden/docs/"+filepath.Base(d), 0o644))
	}
	// Debian's policy wants a changelog in every package (a native one:
	// changelog.gz), and a static binary is what Go builds: said once as
	// an override rather than left for lintian to report.
	changelog, err := writeChangelog(work, version, mtime)
	if err != nil {
		return nil, err
	}
	contents = append(contents,
		file(changelog, "/usr/share/doc/scanwarden/changelog.gz", 0o644),
		file(in("systemd/deb/lintian-overrides"), "/usr/share/lintian/overrides/scanwarden", 0o644))
	for _, u := range []string{"scanwarden.service", "scanwarden-smbd.service",
		"scanwarden-smbd-reload.path", "scanwarden-smbd-reload.service"} {
		contents = append(contents, file(in("systemd/"+u), installed.UnitDir+"/"+u, 0o644))
	}
	// The default configuration is a conffile: dpkg keeps the admin's edits
	// across upgrades and asks before replacing an edited one.
	conf := file(in("systemd/scanwarden.toml"), installed.ConfigFile, 0o644)
	conf.Type = files.TypeConfig
	contents = append(contents, conf)
	return contents, nil
}

// maintainer is the package's Maintainer and its changelog's signer.
const maintainer = "scanwarden maintainers <maintainers@scanwarden.invalid>"

// writeChangelog writes a native package's changelog.gz for this version
// into the folder work (gzip at its best, no name or time in the header,
// as dh_compress makes it) and returns its path.
func writeChangelog(work, version string, mtime time.Time) (string, error) {
	text := fmt.Sprintf("scanwarden (%s) unstable; urgency=medium\n\n  * Build of scanwarden %s.\n\n -- %s  %s\n",
		version, version, maintainer, mtime.UTC().Format("Mon, 02 Jan 2006 15:04:05 -0700"))
	f, err := os.Create(filepath.Join(work, "changelog.gz"))
	if err != nil {
		return "", err
	}
	zw, err := gzip.NewWriterLevel(f, gzip.BestCompression)
	if err == nil {
		_, err = zw.Write([]byte(text))
	}
	if err == nil {
		err = zw.Close()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("changelog: %w", err)
	}
	return f.Name(), nil
}
