package ad

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/testlab"
)

func TestExploreLab(t *testing.T) {
	lab := testlab.Require(t)
	d, err := New(Config{URL: "ldaps://" + lab.DCIP, BindUser: "ldapreader@" + lab.DNSDomain, Password: scanwarden.NewSecret(lab.Password), CAFile: lab.CA})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"alice", "bob", "badpw1", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy", "jdoe", "john.doe", "KYOLAB\\alice", "alice@kyolab.test", "nosuch", "*)(cn=*"} {
		u, err := d.User(context.Background(), n, "SCANWARDEN")
		if err != nil {
			t.Errorf("%s: %v", n, err)
			continue
		}
		b, _ := json.MarshalIndent(u, "", " ")
		t.Logf("%s", b)
	}
	for _, n := range []string{"dc1", "dc1.kyolab.test"} {
		c, err := d.Computer(context.Background(), n)
		if err != nil {
			t.Errorf("%s: %v", n, err)
			continue
		}
		b, _ := json.MarshalIndent(c, "", " ")
		t.Logf("%s", b)
	}
}
