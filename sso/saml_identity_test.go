package sso

import (
	"testing"

	"github.com/crewjam/saml"
)

// attr is a string attribute for crafted assertions.
func attr(name string, values ...string) saml.Attribute {
	at := saml.Attribute{Name: name, NameFormat: "urn:oasis:names:tc:SAML:2.0:attrname-format:basic"}
	for _, v := range values {
		at.Values = append(at.Values, saml.AttributeValue{Type: "xs:string", Value: v})
	}
	return at
}

// withAttrs replaces the assertion's attributes.
func withAttrs(attrs ...saml.Attribute) func(*saml.Assertion) {
	return func(a *saml.Assertion) { a.AttributeStatements = []saml.AttributeStatement{{Attributes: attrs}} }
}

func TestSAMLIdentityMapping(t *testing.T) {
	c := newCrafter(t)
	cases := []struct {
		name  string
		edit  func(p *SAML)
		alter func(*saml.Assertion)
		check func(t *testing.T, id *Identity)
	}{
		{"email_verified names an attribute that says false", func(s *SAML) { s.names = map[string]string{"email_verified": "emailVerified"} },
			withAttrs(attr("mail", "bob@example.com"), attr("emailVerified", "false")),
			func(t *testing.T, id *Identity) {
				if id.EmailVerified || id.Email != "bob@example.com" {
					t.Fatalf("%+v", id)
				}
			}},
		{"email_verified attribute true", func(s *SAML) { s.names = map[string]string{"email_verified": "emailVerified"} },
			withAttrs(attr("mail", "bob@example.com"), attr("emailVerified", "TRUE")),
			func(t *testing.T, id *Identity) {
				if !id.EmailVerified {
					t.Fatalf("%+v", id)
				}
			}},
		{"email_verified attribute absent", func(s *SAML) { s.names = map[string]string{"email_verified": "emailVerified"} },
			withAttrs(attr("mail", "bob@example.com")),
			func(t *testing.T, id *Identity) {
				if id.EmailVerified {
					t.Fatalf("%+v", id)
				}
			}},
		{"email from an email-format NameID", nil, func(a *saml.Assertion) {
			withAttrs()(a)
			a.Subject.NameID.Format, a.Subject.NameID.Value = string(saml.EmailAddressNameIDFormat), "Bob@Example.COM"
		}, func(t *testing.T, id *Identity) {
			if id.Email != "bob@example.com" || !id.EmailVerified || id.Subject != "Bob@Example.COM" {
				t.Fatalf("%+v", id)
			}
		}},
		{"no email anywhere", nil, withAttrs(), func(t *testing.T, id *Identity) {
			if id.Email != "" || id.EmailVerified || id.Subject != "u-1001" {
				t.Fatalf("%+v", id)
			}
		}},
		{"group attribute absent", nil, withAttrs(attr("mail", "bob@example.com")), func(t *testing.T, id *Identity) {
			if !id.GroupsMissing || id.Groups != nil || id.Claims["groups"] != nil {
				t.Fatalf("%+v", id)
			}
		}},
		{"group attribute present but empty", nil, withAttrs(attr("eduPersonAffiliation")), func(t *testing.T, id *Identity) {
			if id.GroupsMissing || len(id.Groups) != 0 {
				t.Fatalf("%+v", id)
			}
		}},
		{"configured email attribute and display name", func(s *SAML) { s.emailAttr = "workEmail" },
			withAttrs(attr("mail", "home@example.com"), attr("workEmail", " Bob@Corp.example "), attr("displayName", "Bob Builder"), attr("dept", "ops", "eng")),
			func(t *testing.T, id *Identity) {
				d, _ := id.Claims["dept"].([]string)
				if id.Email != "bob@corp.example" || id.FirstName != "Bob" || id.LastName != "Builder" || len(d) != 2 || id.Claims["mail"] != "home@example.com" {
					t.Fatalf("%+v", id)
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c.s = c.sp(func(s *SAML) {
				if tc.edit != nil {
					tc.edit(s)
				}
			}, c.pems[idpKeyA()])
			id, _, err := c.s.ParseResponse(c.build(craft{requestID: "r", signAssertion: true, assertion: tc.alter}), "r")
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, id)
		})
	}
	t.Run("custom_mappings come from the rules", func(t *testing.T) {
		p := samlProvider(craftIdP, "https://idp.test/sso", c.pems[idpKeyA()])
		p.Rules = ptr(`{"custom_mappings":{"email_verified":"emailVerified","name":"fullName"}}`)
		s := mustSAML(t, p, "", Options{BaseURL: "https://coffer.test"})
		if s.names["email_verified"] != "emailVerified" || s.names["name"] != "fullName" {
			t.Fatalf("custom mappings %v", s.names)
		}
	})
	t.Run("email_attribute subject without the attribute", func(t *testing.T) {
		c.s = c.sp(func(s *SAML) { s.p.SubjectSource = ptr("email_attribute") }, c.pems[idpKeyA()])
		id, a, err := c.s.ParseResponse(c.build(craft{requestID: "r", signAssertion: true, assertion: withAttrs()}), "r")
		refused(t, id, a, err, "subject")
	})
}
