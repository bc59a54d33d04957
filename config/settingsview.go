package config

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
