package web

import (
	"html/template"
	"strings"
)

// words say the stored values a screen shows (roles, statuses, where a
// row came from) as a person would: "super_admin" is "Super admin".
var words = map[string]string{
	"super_admin": "Super admin", "admin": "Admin", "member": "Member",
	"active": "Active", "suspended": "Suspended", "invited": "Invited", "archived": "Archived",
	"pending": "Waiting", "importing": "Importing", "complete": "Done", "failed": "Failed",
	"reverting": "Undoing", "reverted": "Undone", "running": "Running", "succeeded": "Done",
	"completed": "Done", "claiming": "Connecting", "claim_failed": "Could not connect",
	"requires_reconnect": "Needs reconnecting", "payment_required": "Payment needed at SimpleFIN",
	"rate_limited": "Paused by the bank's limit", "disconnected": "Disconnected",
	"file_import": "an imported file", "simplefin": "your bank (SimpleFIN)", "api": "the API",
	"db": "Added here", "yaml": "Configuration file",
	"oidc": "OpenID Connect", "oauth2": "OAuth 2.0", "saml": "SAML 2.0",
}

// Say is a stored value in words; a value it does not know is shown as
// it is, with its underscores as spaces.
func Say(v string) string {
	if w, ok := words[v]; ok {
		return w
	}
	b := []byte(v)
	for i, c := range b {
		if c == '_' {
			b[i] = ' '
		}
	}
	return string(b)
}

// fieldErr is a field's error message, with the id its field points to
// (see invalid), so a screen reader reads the message with the field.
func fieldErr(errs map[string]string, name string) template.HTML {
	msg := errs[name]
	if msg == "" {
		return ""
	}
	return template.HTML(`<p class="field-error" id="` + template.HTMLEscapeString(name) + `-error" role="alert">` +
		template.HTMLEscapeString(msg) + `</p>`)
}

// invalid marks a field whose value was refused and ties it to its
// message, after the ids of its hints (which it names in any case).
func invalid(errs map[string]string, name string, hints ...string) template.HTMLAttr {
	ids := strings.Join(hints, " ")
	attr := ""
	if errs[name] != "" {
		attr = ` aria-invalid="true"`
		ids = strings.TrimSpace(ids + " " + name + "-error")
	}
	if ids != "" {
		attr += ` aria-describedby="` + template.HTMLEscapeString(ids) + `"`
	}
	return template.HTMLAttr(attr)
}
