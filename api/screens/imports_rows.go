package screens

import (
	"regexp"
	"slices"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"coffer/models"
)

// skippedLines is one page of the rows of a pending import already in the
// account, in file order.
func (h *Handler) skippedLines(c *fiber.Ctx, im *models.Import, skips map[uuid.UUID]models.ImportSkip, page models.Page) ([]models.ImportLine, int, error) {
	ids := make([]uuid.UUID, 0, len(skips))
	for id := range skips {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b uuid.UUID) int { return skips[a].Position - skips[b].Position })
	from := min(len(ids), (page.Number-1)*page.Size)
	want := ids[from:min(len(ids), from+page.Size)]
	if len(want) == 0 {
		return nil, len(ids), nil
	}
	lines, err := h.store.ImportLinesByID(c.UserContext(), im.FamilyID, im.ID, want)
	return lines, len(ids), err
}

// fieldWords name each setting of the file's problems as the screen's
// fields do.
var fieldWords = map[string]string{
	"date_col_label": "date", "amount_col_label": "amount", "name_col_label": "name", "category_col_label": "category",
	"tags_col_label": "tags", "notes_col_label": "notes", "external_id_col_label": "unique id",
	"debit_col_label": "money out", "credit_col_label": "money in",
}

var (
	notAColumn = regexp.MustCompile(`^([a-z_]+_col_label) "(.*)" is not a column of the file`)
	needed     = regexp.MustCompile(`^([a-z_]+_col_label) is required`)
)

// personProblems says the file's problems for a person: a setting's name
// (date_col_label) becomes the field it is about.
func personProblems(problems []string) []string {
	out := make([]string, 0, len(problems))
	for _, p := range problems {
		if m := notAColumn.FindStringSubmatch(p); m != nil && fieldWords[m[1]] != "" {
			p = "The file has no column named \u201c" + m[2] + "\u201d for the " + fieldWords[m[1]] + ": choose the column that holds it below."
		} else if m := needed.FindStringSubmatch(p); m != nil && fieldWords[m[1]] != "" {
			p = "Choose the column that holds the " + fieldWords[m[1]] + "."
		} else if strings.HasPrefix(p, "date_format ") {
			p = "The date format is not one we read: use %d for the day, %m for the month and %Y for the year, like %d.%m.%Y."
		}
		out = append(out, p)
	}
	return out
}
