package rest

import (
	"html"
	"html/template"
	"regexp"
	"strconv"
	"strings"
)

// markdown renders the Markdown that the OpenAPI descriptions use:
// paragraphs, ATX headings, bullet and numbered lists (one level), fenced
// code blocks, `code`, **strong** and [links](url). Everything else comes
// out as escaped text, so a description can never inject markup.
func markdown(src string) template.HTML {
	var out strings.Builder
	var para []string
	list := ""        // "ul" or "ol" while a list is open
	var item []string // the open list item's lines
	flushItem := func() {
		if item != nil {
			out.WriteString("<li>" + inline(strings.Join(item, " ")) + "</li>")
			item = nil
		}
	}
	flush := func() {
		if len(para) > 0 {
			out.WriteString("<p>" + inline(strings.Join(para, " ")) + "</p>")
			para = nil
		}
		flushItem()
		if list != "" {
			out.WriteString("</" + list + ">")
			list = ""
		}
	}
	lines := strings.Split(strings.ReplaceAll(src, "\r\n", "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == "":
			flush()
		case strings.HasPrefix(trimmed, "```"):
			flush()
			var code []string
			for i++; i < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[i]), "```"); i++ {
				code = append(code, lines[i])
			}
			out.WriteString("<pre><code>" + html.EscapeString(strings.Join(code, "\n")) + "</code></pre>")
		case headingLevel(trimmed) > 0:
			flush()
			n := headingLevel(trimmed)
			tag := "h" + strconv.Itoa(n)
			out.WriteString("<" + tag + ">" + inline(strings.TrimSpace(trimmed[n:])) + "</" + tag + ">")
		case listItem(trimmed) != "":
			kind, text := listItem(trimmed), listText(trimmed)
			if len(para) > 0 || list != kind {
				flush()
				list = kind
				out.WriteString("<" + kind + ">")
			}
			flushItem()
			item = []string{text}
		case item != nil:
			// An indented or lazy line continues the list item.
			item = append(item, trimmed)
		default:
			para = append(para, trimmed)
		}
	}
	flush()
	return template.HTML(out.String())
}

func headingLevel(line string) int {
	n := 0
	for n < len(line) && n < 6 && line[n] == '#' {
		n++
	}
	if n == 0 || n >= len(line) || line[n] != ' ' {
		return 0
	}
	return n
}

var orderedItem = regexp.MustCompile(`^\d{1,9}[.)] `)

func listItem(line string) string {
	switch {
	case strings.HasPrefix(line, "- "), strings.HasPrefix(line, "* "), strings.HasPrefix(line, "+ "):
		return "ul"
	case orderedItem.MatchString(line):
		return "ol"
	}
	return ""
}

func listText(line string) string {
	if m := orderedItem.FindString(line); m != "" {
		return line[len(m):]
	}
	return line[2:]
}

var (
	strong = regexp.MustCompile(`\*\*([^*]+)\*\*`)
	mdLink = regexp.MustCompile(`\[([^\]]+)\]\(([^)\s]+)\)`)
)

// inline renders code spans, strong text and links in one line of text.
func inline(s string) string {
	var b strings.Builder
	for {
		open := strings.IndexByte(s, '`')
		if open < 0 {
			break
		}
		end := strings.IndexByte(s[open+1:], '`')
		if end < 0 {
			break
		}
		b.WriteString(emphasis(s[:open]))
		b.WriteString("<code>" + html.EscapeString(s[open+1:open+1+end]) + "</code>")
		s = s[open+end+2:]
	}
	b.WriteString(emphasis(s))
	return b.String()
}

// emphasis escapes text outside code spans and renders its strong text
// and links; a link goes only to this site or to http(s) addresses.
func emphasis(s string) string {
	s = html.EscapeString(s)
	s = strong.ReplaceAllString(s, "<strong>$1</strong>")
	return mdLink.ReplaceAllStringFunc(s, func(m string) string {
		parts := mdLink.FindStringSubmatch(m)
		href := parts[2]
		local := strings.HasPrefix(href, "/") && !strings.HasPrefix(href, "//") || strings.HasPrefix(href, "#")
		if !local && !strings.HasPrefix(href, "https://") && !strings.HasPrefix(href, "http://") {
			return parts[1]
		}
		return `<a href="` + href + `">` + parts[1] + `</a>`
	})
}
