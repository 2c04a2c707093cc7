package config

import (
	"reflect"
	"strings"
	"testing"
)

func TestUserPrivileges(t *testing.T) {
	doc := edit(t, "  users: [{user: app, password: pw}]", `  users:
    - {user: app, password: pw}
    - {user: report, password: r, access: read-only}
    - {user: ops, password: o, hints: true, otherSchemas: true, files: true, access: read-write}
    - {user: none, password: n, schemas: []}
    - {user: listed, password: l, schemas: [db, db]}`)
	r, err := Parse([]byte(doc), "rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	app := Privileges{Schemas: []string{"db"}}
	want := []User{
		{Name: "app", Password: "pw", Privileges: app},
		{Name: "report", Password: "r", Privileges: Privileges{Schemas: []string{"db"}, ReadOnly: true}},
		{Name: "ops", Password: "o", Privileges: Privileges{Schemas: []string{"db"}, Hints: true, OtherSchemas: true, Files: true}},
		{Name: "none", Password: "n", Privileges: Privileges{Schemas: []string{}}},
		{Name: "listed", Password: "l", Privileges: app},
	}
	if !reflect.DeepEqual(r.Server.Users, want) {
		t.Errorf("users:\n got %+v\nwant %+v", r.Server.Users, want)
	}
	if !r.Server.Users[0].MayUse("db") || r.Server.Users[3].MayUse("db") {
		t.Errorf("MayUse: app %v, none %v", r.Server.Users[0].MayUse("db"), r.Server.Users[3].MayUse("db"))
	}
}

func TestUserPrivilegeErrors(t *testing.T) {
	tests := []struct {
		name, give, want string
	}{
		{"unknown key", "{user: app, password: pw, readonly: true}", `unknown key "readonly"`},
		{"access", "{user: app, password: pw, access: write}", `server.users "app": access "write": want read-write or read-only`},
		{"schema", "{user: app, password: pw, schemas: [ds_0]}", `server.users "app": schemas names "ds_0", which is not a logical schema`},
		{"hints", "{user: app, password: pw, hints: some}", `server.users hints must be true or false`},
		{"files", "{user: app, password: pw, files: 1}", `server.users files must be true or false`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := edit(t, "  users: [{user: app, password: pw}]", "  users: ["+tt.give+"]")
			_, err := Parse([]byte(doc), "rules.yaml")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
}
