package config

import "strings"

// SettingsSection is one group of the settings the admin's page shows and
// changes (checks, snmp, ad, notify, …).
type SettingsSection struct {
	Name   string         `json:"name"`
	Title  string         `json:"title"`
	Fields []SettingField `json:"fields"`
	// Tests are the channels "send test" can try ("webhook", "mail").
	Tests []string `json:"tests,omitempty"`
}

// SettingField is one setting as the page shows it. A secret's Value is
// always "": Set says whether one is stored.
type SettingField struct {
	Key      string `json:"key"`
	Label    string `json:"label"`
	Value    string `json:"value"`
	Secret   bool   `json:"secret,omitempty"`
	Set      bool   `json:"set,omitempty"`
	FromFile bool   `json:"from_file,omitempty"` // the config file sets it and wins at start
	Help     string `json:"help,omitempty"`
}

// Settings is c as the settings page shows it: each section's fields with
// their values (a secret's only whether it is set), and which the file sets.
func (c Config) Settings() []SettingsSection {
	var out []SettingsSection
	for _, s := range settingSections {
		sec := SettingsSection{Name: s.name, Title: s.title, Tests: s.tests}
		for _, f := range s.fields {
			sec.Fields = append(sec.Fields, c.settingField(s.name, f))
		}
		out = append(out, sec)
	}
	return out
}

// settingField is the field f of section as the page shows it in c.
func (c Config) settingField(section string, f setting) SettingField {
	wf := SettingField{Key: f.key, Label: f.label, Help: f.help, Secret: f.secret}
	if f.secret {
		wf.Set = !secretField(&c, section, f.key).IsZero()
		wf.FromFile = fileSets(c, section+"."+f.fileKey)
	} else if v, ok := configField(&c, section, f.key); ok {
		wf.Value = formatValue(v)
		wf.FromFile = fileSets(c, section+"."+f.key)
	}
	if wf.FromFile {
		wf.Help = strings.TrimSpace(wf.Help + " — set in " + c.File + ", which wins at start")
	}
	return wf
}
