package models

import (
	"archive/zip"
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"coffer/models/civil"
)

// exportBatch is how many rows the export reads at a time: it holds one
// batch (and the family's accounts, categories, merchants and tags, for
// names), never the whole ledger.
const exportBatch = 1000

// WriteFamilyData writes the family's whole data to w as the reference
// app's export ZIP: version.txt, accounts.csv, transactions.csv,
// trades.csv, categories.csv, merchants.csv, rules.csv, attachments.json
// and all.ndjson, in that order. Rows are read a batch at a time and
// written as they are read.
func (s *Store) WriteFamilyData(ctx context.Context, familyID uuid.UUID, w io.Writer) error {
	// The balances written are those of every write committed so far.
	if err := s.SettleFamilyBalances(ctx, familyID); err != nil {
		return err
	}
	x := &exporter{s: s, ctx: ctx, familyID: familyID}
	if err := x.loadNames(); err != nil {
		return err
	}
	z := zip.NewWriter(w)
	steps := []struct {
		name  string
		write func(io.Writer) error
	}{
		{"version.txt", func(w io.Writer) error {
			_, err := fmt.Fprintf(w, "export_version: %d\n", ExportVersion)
			return err
		}},
		{"accounts.csv", x.accountsCSV},
		{"transactions.csv", x.transactionsCSV},
		{"trades.csv", func(w io.Writer) error {
			return writeCSV(w, [][]string{{"date", "account_name", "ticker", "quantity", "price", "amount", "currency"}})
		}},
		{"categories.csv", x.categoriesCSV},
		{"merchants.csv", x.merchantsCSV},
		{"rules.csv", x.rulesCSV},
		{"attachments.json", func(w io.Writer) error {
			_, err := io.WriteString(w, `{"version":1,"binary_included":false,"attachments":[]}`)
			return err
		}},
		{"all.ndjson", x.ndjson},
	}
	for _, st := range steps {
		f, err := z.CreateHeader(&zip.FileHeader{Name: st.name, Method: zip.Deflate, Modified: s.now()})
		if err != nil {
			return fmt.Errorf("models: export %s: %w", st.name, err)
		}
		bw := bufio.NewWriterSize(f, 64<<10)
		if err := st.write(bw); err != nil {
			return err
		}
		if err := bw.Flush(); err != nil {
			return fmt.Errorf("models: export %s: %w", st.name, err)
		}
	}
	if err := z.Close(); err != nil {
		return fmt.Errorf("models: export: %w", err)
	}
	return nil
}

type exporter struct {
	s        *Store
	ctx      context.Context
	familyID uuid.UUID

	accounts   []Account
	accountsBy map[uuid.UUID]*Account
	categories []Category
	catsBy     map[uuid.UUID]*Category
	merchants  []Merchant
	merchBy    map[uuid.UUID]*Merchant
	tags       []Tag
	tagsBy     map[uuid.UUID]*Tag
	// firstDate is each account's first day with a transaction or a dated
	// valuation: the day after an undated opening balance.
	firstDate map[uuid.UUID]civil.Date
}

// loadNames reads the family's small tables, which the rows of the big
// ones name.
func (x *exporter) loadNames() error {
	db, f := x.s.db, x.familyID
	if err := db.NewSelect().Model(&x.accounts).Where("a.family_id = ?", f).OrderExpr("a.id").Scan(x.ctx); err != nil {
		return dbErr("export accounts", err)
	}
	if err := db.NewSelect().Model(&x.categories).Where("c.family_id = ?", f).OrderExpr("c.id").Scan(x.ctx); err != nil {
		return dbErr("export categories", err)
	}
	if err := db.NewSelect().Model(&x.merchants).Where("m.family_id = ?", f).OrderExpr("m.id").Scan(x.ctx); err != nil {
		return dbErr("export merchants", err)
	}
	if err := db.NewSelect().Model(&x.tags).Where("tg.family_id = ?", f).OrderExpr("tg.id").Scan(x.ctx); err != nil {
		return dbErr("export tags", err)
	}
	x.accountsBy, x.catsBy = map[uuid.UUID]*Account{}, map[uuid.UUID]*Category{}
	x.merchBy, x.tagsBy = map[uuid.UUID]*Merchant{}, map[uuid.UUID]*Tag{}
	for i := range x.accounts {
		x.accountsBy[x.accounts[i].ID] = &x.accounts[i]
	}
	for i := range x.categories {
		x.catsBy[x.categories[i].ID] = &x.categories[i]
	}
	for i := range x.merchants {
		x.merchBy[x.merchants[i].ID] = &x.merchants[i]
	}
	for i := range x.tags {
		x.tagsBy[x.tags[i].ID] = &x.tags[i]
	}
	var firsts []struct {
		AccountID uuid.UUID  `bun:"account_id"`
		First     civil.Date `bun:"first"`
	}
	err := db.NewSelect().TableExpr("transactions AS t").ColumnExpr("t.account_id, MIN(t.date) AS first").
		Where("t.family_id = ?", f).Where("t.deleted_at IS NULL").GroupExpr("t.account_id").Scan(x.ctx, &firsts)
	if err != nil {
		return dbErr("export first dates", err)
	}
	var valued []struct {
		AccountID uuid.UUID  `bun:"account_id"`
		First     civil.Date `bun:"first"`
	}
	err = db.NewSelect().TableExpr("valuations AS v").ColumnExpr("v.account_id, MIN(v.date) AS first").
		Where("v.family_id = ?", f).Where("v.date IS NOT NULL").GroupExpr("v.account_id").Scan(x.ctx, &valued)
	if err != nil {
		return dbErr("export first dates", err)
	}
	x.firstDate = map[uuid.UUID]civil.Date{}
	for _, r := range append(firsts, valued...) {
		if d, ok := x.firstDate[r.AccountID]; !ok || r.First < d {
			x.firstDate[r.AccountID] = r.First
		}
	}
	return nil
}

// eachBatch reads the rows q selects (of the family, filtered by the
// caller) in id order, exportBatch at a time, handing each batch to fn.
func eachBatch[T any](x *exporter, alias string, filter func(*bun.SelectQuery) *bun.SelectQuery, id func(*T) uuid.UUID, fn func([]T) error) error {
	var after *uuid.UUID
	for {
		var rows []T
		q := x.s.db.NewSelect().Model(&rows).Where(alias+".family_id = ?", x.familyID).
			OrderExpr(alias + ".id").Limit(exportBatch)
		if filter != nil {
			q = filter(q)
		}
		if after != nil {
			q = q.Where(alias+".id > ?", *after)
		}
		if err := q.Scan(x.ctx); err != nil {
			return dbErr("export rows", err)
		}
		if len(rows) == 0 {
			return nil
		}
		if err := fn(rows); err != nil {
			return err
		}
		if len(rows) < exportBatch {
			return nil
		}
		last := id(&rows[len(rows)-1])
		after = &last
	}
}

func writeCSV(w io.Writer, rows [][]string) error {
	cw := csv.NewWriter(w)
	if err := cw.WriteAll(rows); err != nil {
		return fmt.Errorf("models: export csv: %w", err)
	}
	return nil
}

// railsISO is how Ruby's Time#iso8601 writes a UTC time.
func railsISO(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func (x *exporter) accountsCSV(w io.Writer) error {
	rows := [][]string{{"id", "name", "type", "subtype", "balance", "currency", "created_at"}}
	for i := range x.accounts {
		a := &x.accounts[i]
		rows = append(rows, []string{a.ID.String(), a.Name, accountableType(a.AccountType), str(a.Subtype),
			exportDecimal(a.Balance).String(), a.Currency, railsISO(a.CreatedAt)})
	}
	return writeCSV(w, rows)
}

// escapeTagName escapes the reference's separators in a tag name of
// transactions.csv's comma-joined tags column.
func escapeTagName(name string) string {
	r := strings.NewReplacer(`\`, `\\`, `,`, `\,`, `|`, `\|`)
	return r.Replace(name)
}

func liveTransactions(q *bun.SelectQuery) *bun.SelectQuery { return q.Where("t.deleted_at IS NULL") }

// transactionsCSV lists every transaction that counts: a split's parts
// instead of the row they were split from.
func (x *exporter) transactionsCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"date", "account_name", "amount", "name", "category", "tags", "notes", "currency"}); err != nil {
		return fmt.Errorf("models: export csv: %w", err)
	}
	filter := func(q *bun.SelectQuery) *bun.SelectQuery {
		return liveTransactions(q).Where("(t.excluded_reason IS NULL OR t.excluded_reason <> ?)", ExcludedSplit)
	}
	err := eachBatch(x, "t", filter, func(t *Transaction) uuid.UUID { return t.ID }, func(ts []Transaction) error {
		tags, err := x.tagsOf(ts)
		if err != nil {
			return err
		}
		for i := range ts {
			t := &ts[i]
			var names []string
			for _, id := range tags[t.ID] {
				names = append(names, escapeTagName(x.tagsBy[id].Name))
			}
			account, category := "", ""
			if a := x.accountsBy[t.AccountID]; a != nil {
				account = a.Name
			}
			if t.CategoryID != nil && x.catsBy[*t.CategoryID] != nil {
				category = x.catsBy[*t.CategoryID].Name
			}
			if err := cw.Write([]string{string(t.Date), account, exportDecimal(t.Amount).String(), t.Name, category,
				strings.Join(names, ","), str(t.Notes), t.Currency}); err != nil {
				return fmt.Errorf("models: export csv: %w", err)
			}
		}
		cw.Flush()
		return cw.Error()
	})
	cw.Flush()
	if err == nil {
		err = cw.Error()
	}
	return err
}

// tagsOf returns the tag ids of each of ts, in tag order.
func (x *exporter) tagsOf(ts []Transaction) (map[uuid.UUID][]uuid.UUID, error) {
	out := map[uuid.UUID][]uuid.UUID{}
	if len(ts) == 0 {
		return out, nil
	}
	ids := make([]uuid.UUID, len(ts))
	for i := range ts {
		ids[i] = ts[i].ID
	}
	var links []TransactionTag
	err := x.s.db.NewSelect().Model(&links).Where("tt.family_id = ?", x.familyID).
		Where("tt.transaction_id IN (?)", bun.List(ids)).OrderExpr("tt.transaction_id, tt.tag_id").Scan(x.ctx)
	if err != nil {
		return nil, dbErr("export transaction tags", err)
	}
	for _, l := range links {
		if x.tagsBy[l.TagID] != nil {
			out[l.TransactionID] = append(out[l.TransactionID], l.TagID)
		}
	}
	return out, nil
}

func (x *exporter) categoriesCSV(w io.Writer) error {
	rows := [][]string{{"name", "color", "parent_category", "lucide_icon"}}
	for i := range x.categories {
		c := &x.categories[i]
		parent := ""
		if c.ParentID != nil && x.catsBy[*c.ParentID] != nil {
			parent = x.catsBy[*c.ParentID].Name
		}
		rows = append(rows, []string{c.Name, c.Color, parent, lucideIcon(c)})
	}
	return writeCSV(w, rows)
}

func (x *exporter) merchantsCSV(w io.Writer) error {
	rows := [][]string{{"name", "color", "website_url"}}
	for i := range x.merchants {
		rows = append(rows, []string{x.merchants[i].Name, merchantColor, ""})
	}
	return writeCSV(w, rows)
}

func (x *exporter) rulesCSV(w io.Writer) error {
	rows := [][]string{{"name", "resource_type", "active", "effective_date", "conditions", "actions"}}
	err := x.eachRule(func(r exportRule) error {
		conds, err := json.Marshal(r.Conditions)
		if err != nil {
			return err
		}
		acts, err := json.Marshal(r.Actions)
		if err != nil {
			return err
		}
		eff := ""
		if r.EffectiveDate != nil {
			eff = string(*r.EffectiveDate)
		}
		rows = append(rows, []string{str(r.Name), r.ResourceType, fmt.Sprint(r.Active), eff, string(conds), string(acts)})
		return nil
	})
	if err != nil {
		return err
	}
	return writeCSV(w, rows)
}
