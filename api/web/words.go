package web

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
