package web

import (
	"errors"
	"io"
	"net/http"
	"strconv"

	"github.com/scanwarden/scanwarden/registry"
)

// maxExport bounds an uploaded address-book export.
const maxExport = 8 << 20

type importView struct {
	Devices []registry.DeviceView
	Device  string
	Pending string
	Result  *registry.ImportView
	Counts  map[string]int
}

// importForm is the upload form.
func (s *importPages) importForm(w http.ResponseWriter, r *http.Request, _ actor) {
	v := importView{Device: r.URL.Query().Get("device")}
	if s.fleet != nil {
		var err error
		if v.Devices, err = s.fleet.Devices(r.Context()); err != nil {
			s.log.Error("import: devices", "err", err)
		}
	}
	s.render(w, http.StatusOK, "import", pageData{Title: "Import an address book", Nav: "import", LoggedIn: true, Data: v})
}

// importPreview reads the upload and shows what an import would do.
func (s *importPages) importPreview(w http.ResponseWriter, r *http.Request, _ actor) {
	if s.importer == nil {
		s.fail(w, r, "importer", ErrNotRunning)
		return
	}
	v := importView{Device: r.FormValue("device")}
	if s.fleet != nil {
		v.Devices, _ = s.fleet.Devices(r.Context())
	}
	bad := func(msg string) {
		s.render(w, http.StatusBadRequest, "import", pageData{Title: "Import an address book", Nav: "import", LoggedIn: true,
			Error: msg, Data: v})
	}
	f, _, err := r.FormFile("export")
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			bad("The file is larger than " + strconv.Itoa(maxExport>>20) + " MiB.")
			return
		}
		bad("Choose the address-book export file.")
		return
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxExport+1))
	if err != nil || len(data) > maxExport {
		bad("The file could not be read or is larger than " + strconv.Itoa(maxExport>>20) + " MiB.")
		return
	}
	if v.Device == "" {
		bad("Choose the device the address book comes from.")
		return
	}
	res, err := s.importer.Import(r.Context(), v.Device, data, true)
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			bad("No such device.")
			return
		}
		bad("The file could not be imported: " + err.Error())
		return
	}
	v.Result, v.Counts = &res, countActions(res)
	v.Pending = s.imports.put(v.Device, data)
	s.render(w, http.StatusOK, "import", pageData{Title: "Import preview", Nav: "import", LoggedIn: true, Data: v})
}

// importConfirm imports the previewed upload.
func (s *importPages) importConfirm(w http.ResponseWriter, r *http.Request, a actor) {
	if s.importer == nil {
		s.fail(w, r, "importer", ErrNotRunning)
		return
	}
	p, ok := s.imports.take(r.PostFormValue("pending"))
	if !ok {
		s.render(w, http.StatusBadRequest, "import", pageData{Title: "Import an address book", Nav: "import", LoggedIn: true,
			Error: "That preview has expired (30 minutes) or was already imported. Upload the file again."})
		return
	}
	res, err := s.importer.Import(r.Context(), p.device, p.data, false)
	if err != nil {
		s.render(w, http.StatusBadRequest, "import", pageData{Title: "Import an address book", Nav: "import", LoggedIn: true,
			Error: "The import failed: " + err.Error()})
		return
	}
	c := countActions(res)
	s.audit(r.Context(), a, r, "import", p.device, "add "+strconv.Itoa(c["add"])+", update "+strconv.Itoa(c["update"])+
		", skip "+strconv.Itoa(c["skip"]))
	s.render(w, http.StatusOK, "import", pageData{Title: "Imported", Nav: "import", LoggedIn: true,
		Flash: "Imported.", Data: importView{Device: p.device, Result: &res, Counts: c}})
}

func countActions(res registry.ImportView) map[string]int {
	c := map[string]int{}
	for _, e := range res.Entries {
		c[e.Action]++
	}
	return c
}
