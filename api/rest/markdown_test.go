package rest

import (
	"regexp"
	"strings"
	"testing"
)

func TestMarkdown(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"One line\nwrapped.\n\nTwo.", "<p>One line wrapped.</p><p>Two.</p>"},
		{"## Errors\nEvery `error` is **stable**.", "<h2>Errors</h2><p>Every <code>error</code> is <strong>stable</strong>.</p>"},
		{"- a\n  continued\n- b\n\n1. one\n2. two", "<ul><li>a continued</li><li>b</li></ul><ol><li>one</li><li>two</li></ol>"},
		{"Text\n- item", "<p>Text</p><ul><li>item</li></ul>"},
		{"```\n<b>x</b>\n```", "<pre><code>&lt;b&gt;x&lt;/b&gt;</code></pre>"},
		{"`Transfer to <destination>` & <i>", "<p><code>Transfer to &lt;destination&gt;</code> &amp; &lt;i&gt;</p>"},
		{"See [keys](/settings/api_keys) or [x](javascript:alert) or [y](//evil.example)",
			`<p>See <a href="/settings/api_keys">keys</a> or x or y</p>`},
		{"`**not bold**`", "<p><code>**not bold**</code></p>"},
	} {
		if got := string(markdown(tc.in)); got != tc.want {
			t.Errorf("markdown(%q)\n got %s\nwant %s", tc.in, got, tc.want)
		}
	}
}

// ourTags is every tag markdown writes; anything else that looks like
// markup in its output came from the input.
var ourTags = regexp.MustCompile(`</?(p|h[1-6]|ul|ol|li|pre|code|strong)>|<a href="[^"<>]*">|</a>`)

func FuzzMarkdown(f *testing.F) {
	for _, s := range []string{"## H\n- a\n- b", "`x` **y** [l](/z)", "```\n<script>\n```", "[a](https://b\" onclick=\"x)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := ourTags.ReplaceAllString(string(markdown(in)), "")
		if strings.ContainsAny(out, "<>\"") {
			t.Fatalf("markdown(%q) lets markup through: %s", in, out)
		}
	})
}
