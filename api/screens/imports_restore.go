package screens

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/gofiber/fiber/v2"

	"coffer/api/web"
	"coffer/jobs"
	"coffer/models"
	"coffer/models/importfile"
)

// Restoring a family from the reference app's export: the form on
// /imports checks the file first ("Check the file": what it holds, by
// kind, and nothing written), then restores it all or nothing. The page
// keeps no file between the two: the check offers the same form again.

type restoreData struct {
	Filename string
	Size     string
	Lines    int
	Kinds    []restoreKind
	Warnings []string
}

type restoreKind struct {
	Kind  string
	Count int
}

var restoreKindNames = map[string]string{"accounts": "Accounts", "balances": "Daily balances", "categories": "Categories",
	"tags": "Tags", "merchants": "Merchants", "transactions": "Transactions", "transfers": "Transfers",
	"rejected_transfers": "Rejected transfer matches", "trades": "Trades", "holdings": "Holdings", "valuations": "Valuations",
	"budgets": "Budgets", "budget_categories": "Budget categories", "rules": "Rules"}

func restoreKindName(k string) string {
	if n, ok := restoreKindNames[k]; ok {
		return n
	}
	return strings.ReplaceAll(k, "_", " ")
}

func (h *Handler) restoreScreen(c *fiber.Ctx) error {
	ctx, fam := c.UserContext(), web.SessionOf(c).User.FamilyID
	fail := func(msg string) error {
		return h.importsPage(c, fiber.StatusUnprocessableEntity, importForm{Type: importfile.CSV}, msg)
	}
	data, name, problem, err := uploaded(c, "Choose the export file to restore.")
	if err != nil {
		return err
	} else if problem != "" {
		return fail(problem)
	}
	var bad *importfile.SureError
	refuse := func(err error) error {
		if errors.As(err, &bad) {
			where := ""
			if bad.Line > 0 {
				where = fmt.Sprintf("line %d: ", bad.Line)
			}
			return fail("The file cannot be restored (" + where + bad.Reason + "). Nothing was written.")
		}
		return err
	}
	if c.FormValue("action") != "restore" {
		scan, err := importfile.ScanSure(data)
		if err != nil {
			return refuse(err)
		}
		d := restoreData{Filename: name, Size: byteSize(len(data)), Lines: scan.Lines}
		counts := map[string]int{}
		for typ, n := range scan.Counts {
			counts[models.SureKind(typ)] += n
		}
		for k, n := range counts {
			d.Kinds = append(d.Kinds, restoreKind{Kind: restoreKindName(k), Count: n})
		}
		sort.Slice(d.Kinds, func(i, j int) bool { return d.Kinds[i].Kind < d.Kinds[j].Kind })
		for typ, n := range scan.Counts {
			if typ == "Balance" {
				d.Warnings = append(d.Warnings, fmt.Sprintf("%d daily balances are not kept: coffer works balances out from the valuations and transactions.", n))
			} else if !restoreWrites(typ) {
				d.Warnings = append(d.Warnings, fmt.Sprintf("%d %s are left out: coffer does not keep them.", n, strings.ToLower(restoreKindName(models.SureKind(typ)))))
			}
		}
		sort.Strings(d.Warnings)
		return h.pages.Render(c, fiber.StatusOK, "restore", web.Page{Nav: "imports", Title: "Restore from an export", Data: d})
	}
	r, _, err := h.store.CreateRestore(ctx, fam, &name, data)
	if err != nil {
		return refuse(err)
	}
	task, err := jobs.NewRestoreRunTask(fam, r.ID)
	if err != nil {
		return err
	}
	if err := jobs.EnqueueImport(ctx, h.queue, task); err != nil {
		return err
	}
	return h.site.Redirect(c, "/imports", "Restoring "+name+": the list of restores below shows when it is done.")
}

func restoreWrites(typ string) bool {
	for _, t := range importfile.SureTypes {
		if t == typ {
			return true
		}
	}
	return false
}

func byteSize(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
