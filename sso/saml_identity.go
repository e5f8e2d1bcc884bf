package sso

import (
	"strings"

	"github.com/crewjam/saml"
)

// defaultEmailAttrs are tried in order when no email attribute is set.
var defaultEmailAttrs = []string{
	"email", "mail", "urn:oid:0.9.2342.19200300.100.1.3",
	"http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress",
}

// Default attribute names of first, last and full name (split at the
// first space when neither of the others is present); custom_mappings
// first_name, last_name and name override them.
var (
	firstNameAttrs = []string{"givenName", "urn:oid:2.5.4.42", "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/givenname"}
	lastNameAttrs  = []string{"sn", "surname", "urn:oid:2.5.4.4", "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/surname"}
	fullNameAttrs  = []string{"displayName", "urn:oid:2.16.840.1.113730.3.1.241", "cn", "urn:oid:2.5.4.3"}
)

// maxGroups is the most group values read; more counts as absent, as for
// OIDC.
const maxGroups = 1000

// samlAttrs are the attributes of a verified assertion.
type samlAttrs []saml.Attribute

// values returns the text values of the first attribute whose Name or
// FriendlyName is name, and whether there is one.
func (as samlAttrs) values(name string) ([]string, bool) {
	if name == "" {
		return nil, false
	}
	for _, a := range as {
		if a.Name == name || a.FriendlyName == name {
			out := make([]string, 0, len(a.Values))
			for _, v := range a.Values {
				if v.NameID == nil {
					out = append(out, v.Value)
				}
			}
			return out, true
		}
	}
	return nil, false
}

func (as samlAttrs) first(names ...string) string {
	for _, n := range names {
		if vs, ok := as.values(n); ok && len(vs) > 0 && strings.TrimSpace(vs[0]) != "" {
			return strings.TrimSpace(vs[0])
		}
	}
	return ""
}

// identity maps a verified assertion to the Identity (spec/sso.md §6.3
// step 5).
func (s *SAML) identity(a *saml.Assertion) (*Identity, error) {
	var attrs samlAttrs
	for _, st := range a.AttributeStatements {
		attrs = append(attrs, st.Attributes...)
	}
	id := &Identity{Claims: map[string]any{}}
	nameFormat := ""
	if a.Subject.NameID != nil {
		id.NameID = strings.TrimSpace(a.Subject.NameID.Value)
		nameFormat = a.Subject.NameID.Format
	}
	if len(a.AuthnStatements) > 0 {
		id.SessionIndex = a.AuthnStatements[0].SessionIndex
	}

	// The email attribute setting wins over the rules' custom_mappings.
	email := ""
	if s.emailAttr != "" {
		email = attrs.first(s.emailAttr)
	} else {
		email = attrs.first(s.attrNames("email", defaultEmailAttrs)...)
	}
	fromAttr := email != ""
	nameIDIsEmail := nameFormat == string(saml.EmailAddressNameIDFormat) ||
		(nameFormat == "" && s.format == saml.EmailAddressNameIDFormat)
	if email == "" && nameIDIsEmail && strings.Contains(id.NameID, "@") {
		email = id.NameID
	}
	id.Email = strings.ToLower(strings.TrimSpace(email))

	switch s.subjectSource() {
	case "email_attribute":
		if !fromAttr {
			return nil, invalid("subject: no email attribute")
		}
		id.Subject = id.Email
	default:
		if nameFormat == string(saml.TransientNameIDFormat) {
			return nil, invalid("subject: a transient NameID cannot identify a person")
		}
		id.Subject = id.NameID
	}
	if id.Subject == "" {
		return nil, invalid("subject: empty")
	}

	// The assertion is signed by the configured IdP, so its email counts
	// as verified unless the rules name an attribute that must say so.
	id.EmailVerified = id.Email != ""
	if name := s.names["email_verified"]; name != "" && id.Email != "" {
		id.EmailVerified = strings.EqualFold(attrs.first(name), "true")
	}

	id.FirstName = attrs.first(s.attrNames("first_name", firstNameAttrs)...)
	id.LastName = attrs.first(s.attrNames("last_name", lastNameAttrs)...)
	if id.FirstName == "" && id.LastName == "" {
		id.FirstName, id.LastName, _ = strings.Cut(attrs.first(s.attrNames("name", fullNameAttrs)...), " ")
	}

	for _, at := range attrs {
		vals := make([]string, 0, len(at.Values))
		for _, v := range at.Values {
			if v.NameID == nil {
				vals = append(vals, v.Value)
			}
		}
		var v any = vals
		if len(vals) == 1 {
			v = vals[0]
		}
		for _, k := range []string{at.Name, at.FriendlyName} {
			if _, taken := id.Claims[k]; k != "" && !taken {
				id.Claims[k] = v
			}
		}
	}
	groups, ok := attrs.values(s.groupAttr)
	if !ok || len(groups) > maxGroups {
		id.GroupsMissing = true
		delete(id.Claims, "groups")
	} else {
		id.Groups = groups
		id.Claims["groups"] = groups
	}
	return id, nil
}

func (s *SAML) subjectSource() string {
	if s.p.SubjectSource == nil {
		return "name_id"
	}
	return *s.p.SubjectSource
}

func (s *SAML) attrNames(key string, defaults []string) []string {
	if n := s.names[key]; n != "" {
		return []string{n}
	}
	return defaults
}
