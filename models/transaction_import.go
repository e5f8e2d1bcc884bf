package models

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"sort"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"coffer/models/civil"
	"coffer/models/money"
)

// SourceSimpleFIN is the source of rows imported from SimpleFIN Bridge.
const SourceSimpleFIN = "simplefin"

// ImportRow is one validated remote transaction in the ledger's terms:
// Amount is already negated (expenses positive).
type ImportRow struct {
	ExternalID string
	Date       civil.Date
	Amount     money.Amount
	Name       string
	Notes      *string
	Pending    bool
	Meta       ProviderMeta

	key string
}

// ImportOptions are the connection's and the service's import settings.
type ImportOptions struct {
	ConnectionID   uuid.UUID
	IncludePending bool
	MatchDays      int        // largest gap between a pending row and its posted twin
	StaleDays      int        // age after which a pending row that never posted is excluded
	Today          civil.Date // in UTC
	// Balance is the bank's balance of the account, nil when unknown; the
	// ledger account is brought to it (see alignBalance).
	Balance *money.Amount
}

// storedTx is what the importer reads of an imported row.
type storedTx struct {
	bun.BaseModel `bun:"table:transactions,alias:t"`

	ID             uuid.UUID    `bun:"id"`
	ExternalID     *string      `bun:"external_id"`
	Date           civil.Date   `bun:"date"`
	Amount         money.Amount `bun:"amount"`
	Name           string       `bun:"name"`
	Notes          *string      `bun:"notes"`
	Pending        bool         `bun:"pending"`
	Excluded       bool         `bun:"excluded"`
	ExcludedReason *string      `bun:"excluded_reason"`
	LockedFields   []string     `bun:"locked_fields"`
	DeletedAt      *time.Time   `bun:"deleted_at"`
	ContentKey     *string      `bun:"content_key"`
	ProviderMeta   *string      `bun:"provider_meta"`
	CreatedAt      time.Time    `bun:"created_at"`
	// ReconciliationID set: a finished reconciliation locked the row, and
	// the bank's later versions of it are skipped.
	ReconciliationID *uuid.UUID `bun:"reconciliation_id"`

	meta ProviderMeta
	used bool // claimed by an answer row in this run
}

func (t *storedTx) locked(field string) bool { return slices.Contains(t.LockedFields, field) }

// ImportTransactions runs one account step of a sync (spec/aggregator.md
// §9) in one transaction: it locks the ledger account, resolves each row
// by its id or an alias, recognises re-issued ids and settled pending
// rows, writes only what changed (in bulk, never a round trip per row)
// and marks the step completed, finishing the parent if it was the last.
// A crash anywhere rolls everything back; the re-run reaches the same end.
func (s *Store) ImportTransactions(ctx context.Context, step *Sync, accountID uuid.UUID, rows []ImportRow, o ImportOptions) error {
	fam := step.FamilyID
	return s.bulkTx(ctx, func(tx *Store, copyRows copyFunc) error {
		a := new(Account)
		q := tx.db.NewSelect().Model(a).Where("a.family_id = ?", fam).Where("a.id = ?", accountID)
		if tx.Postgres() {
			q.For("UPDATE")
		}
		if err := q.Scan(ctx); err != nil {
			return dbErr("lock account", err)
		}
		tx.balanceChange(ctx, fam, accountID)
		now := tx.now()
		if !o.IncludePending {
			kept := rows[:0]
			for _, r := range rows {
				if r.Pending {
					step.TransactionsSkipped++
				} else {
					kept = append(kept, r)
				}
			}
			rows = kept
			if _, err := tx.db.NewUpdate().Model((*Transaction)(nil)).Set("excluded = TRUE").Set("excluded_reason = 'pending_disabled'").
				Set("updated_at = ?", now).Where("family_id = ?", fam).Where("account_id = ?", accountID).
				Where("source = ?", SourceSimpleFIN).Where("pending").Where("NOT excluded").Where("deleted_at IS NULL").
				Where("reconciliation_id IS NULL").Exec(ctx); err != nil {
				return dbErr("exclude pending", err)
			}
		}
		im := &importer{tx: tx, fam: fam, account: a, o: o, now: now, step: step}
		if err := im.load(ctx, rows); err != nil {
			return err
		}
		if err := im.loadArrivals(ctx, rows); err != nil {
			return err
		}
		im.plan(rows)
		tags, transfers, err := tx.importRules(ctx, fam, im.writes, im.created)
		if err != nil {
			return err
		}
		if err := tx.writeImported(ctx, copyRows, im.writes); err != nil {
			return err
		}
		if err := tx.payImported(ctx, fam, im.writes, im.created, transfers); err != nil {
			return err
		}
		if err := tx.followSplitParents(ctx, fam, im.review, im.redated); err != nil {
			return err
		}
		if err := tx.insertTags(ctx, tags); err != nil {
			return err
		}
		for _, r := range transfers {
			to, err := tx.ruleTransfer(ctx, fam, r, nil)
			if err != nil {
				return err
			}
			tx.balanceChange(ctx, fam, to)
		}
		if err := tx.insertAliases(ctx, im.aliases); err != nil {
			return err
		}
		stale := civil.DateOf(now.AddDate(0, 0, -o.StaleDays))
		res, err := tx.db.NewUpdate().Model((*Transaction)(nil)).Set("excluded = TRUE").Set("excluded_reason = 'stale_pending'").
			Set("updated_at = ?", now).Where("family_id = ?", fam).Where("account_id = ?", accountID).
			Where("source = ?", SourceSimpleFIN).Where("pending").Where("NOT excluded").Where("deleted_at IS NULL").
			Where("reconciliation_id IS NULL").
			Where("date < ?", stale).Exec(ctx)
		if err != nil {
			return dbErr("exclude stale pending", err)
		}
		n, _ := res.RowsAffected()
		step.StalePendingExcluded += int(n)
		if o.Balance != nil {
			if err := tx.alignBalance(ctx, a, *o.Balance, o.Today); err != nil {
				return err
			}
		}
		return tx.completeChild(ctx, step)
	})
}

// importer holds one account step's state between its phases.
type importer struct {
	tx      *Store
	fam     uuid.UUID
	account *Account
	o       ImportOptions
	now     time.Time
	step    *Sync

	byExt   map[string]*storedTx
	byID    map[uuid.UUID]*storedTx
	aliasTo map[string]uuid.UUID
	// others holds the account's rows of other doors (a file, a person)
	// that a new posted row may be the same movement as; matched, the ids
	// of those an alias of this source already ties to an id.
	others  *rowMatcher
	matched map[uuid.UUID]bool
	writes  []Transaction
	created []int // the indexes in writes of new rows
	aliases []TransactionAlias
	// review is the split parents whose amount the bank changed: their
	// parts stay as a person made them, and the split is marked for review.
	review []uuid.UUID
	// redated is the split parents whose day the bank changed: their
	// parts move with them, so that they stay on the parent's day.
	redated []uuid.UUID
}

// load reads the account's imported rows the answer can touch: those in
// its date range (less the matching gap), the pending ones, and any named
// by an id or an alias of the answer.
func (im *importer) load(ctx context.Context, rows []ImportRow) error {
	im.byExt, im.byID, im.aliasTo = map[string]*storedTx{}, map[uuid.UUID]*storedTx{}, map[string]uuid.UUID{}
	if len(rows) == 0 {
		return nil
	}
	minDate := rows[0].Date
	for _, r := range rows {
		if r.Date < minDate {
			minDate = r.Date
		}
	}
	from, _ := time.Parse(time.DateOnly, string(minDate))
	var stored []*storedTx
	err := im.tx.db.NewSelect().Model(&stored).Where("t.family_id = ?", im.fam).Where("t.account_id = ?", im.account.ID).
		Where("t.source = ?", SourceSimpleFIN).Where("(t.date >= ? OR t.pending)", civil.DateOf(from.AddDate(0, 0, -im.o.MatchDays-31))).
		Scan(ctx)
	if err != nil {
		return dbErr("load imported rows", err)
	}
	aliases, err := im.tx.accountAliases(ctx, im.fam, im.account.ID, SourceSimpleFIN)
	if err != nil {
		return err
	}
	im.add(stored)
	var missingExt []string
	var missingID []uuid.UUID
	for _, al := range aliases {
		im.aliasTo[al.ExternalID] = al.TransactionID
		if im.byID[al.TransactionID] == nil && al.Reason != AliasMatched { // another door's row: see loadArrivals
			missingID = append(missingID, al.TransactionID)
		}
	}
	for _, r := range rows {
		if im.byExt[r.ExternalID] == nil {
			missingExt = append(missingExt, r.ExternalID)
		}
	}
	// Rows outside the range (a user moved their date) are found by key.
	for len(missingExt) > 0 || len(missingID) > 0 {
		ext, ids := missingExt[:min(len(missingExt), 1000)], missingID[:min(len(missingID), 1000)]
		missingExt, missingID = missingExt[len(ext):], missingID[len(ids):]
		var more []*storedTx
		q := im.tx.db.NewSelect().Model(&more).Where("t.family_id = ?", im.fam).Where("t.account_id = ?", im.account.ID).
			Where("t.source = ?", SourceSimpleFIN)
		switch {
		case len(ext) > 0 && len(ids) > 0:
			q.Where("(t.external_id IN (?) OR t.id IN (?))", bun.List(ext), bun.List(ids))
		case len(ext) > 0:
			q.Where("t.external_id IN (?)", bun.List(ext))
		default:
			q.Where("t.id IN (?)", bun.List(ids))
		}
		if err := q.Scan(ctx); err != nil {
			return dbErr("load imported rows by id", err)
		}
		im.add(more)
	}
	return nil
}

func (im *importer) add(stored []*storedTx) {
	for _, st := range stored {
		if im.byID[st.ID] != nil {
			continue
		}
		if st.ProviderMeta != nil {
			_ = json.Unmarshal([]byte(*st.ProviderMeta), &st.meta) // a row without readable meta never matches
		}
		im.byID[st.ID] = st
		if st.ExternalID != nil {
			im.byExt[*st.ExternalID] = st
		}
	}
}

func (im *importer) resolve(ext string) *storedTx {
	if st := im.byExt[ext]; st != nil {
		return st
	}
	if id, ok := im.aliasTo[ext]; ok {
		return im.byID[id]
	}
	return nil
}

// plan decides, for every row, whether it is new, an update, a re-issued
// id, the posted twin of a pending row, or unchanged.
func (im *importer) plan(rows []ImportRow) {
	matched := make([]*storedTx, len(rows))
	for i := range rows {
		rows[i].key = contentKey(im.account.ID, &rows[i])
		if st := im.resolve(rows[i].ExternalID); st != nil {
			matched[i] = st
			st.used = true // its id is in this answer
		}
	}
	done := make([]bool, len(rows))
	im.reissued(rows, matched, done)
	im.settlePending(rows, matched, done)
	for i := range rows {
		if done[i] {
			continue
		}
		r := &rows[i]
		st := matched[i]
		switch {
		case st == nil && im.matched[im.aliasTo[r.ExternalID]]:
			// Matched before to a row another door wrote: that row is it.
			im.step.TransactionsSkipped++
		case st == nil:
			if id, ok := im.sameAsOther(r); ok {
				im.alias(r.ExternalID, id, AliasMatched)
				im.step.TransactionsSkipped++
				continue
			}
			im.insert(r)
		case st.DeletedAt != nil || (r.Pending && !st.Pending):
			// A tombstone stays deleted; a posted row never goes back to pending.
			im.step.TransactionsSkipped++
		default:
			if im.update(st, r, r.ExternalID) {
				im.step.TransactionsUpdated++
			} else {
				im.step.TransactionsSkipped++
			}
		}
	}
}

// reissued pairs new posted ids with stored posted rows of the same
// content whose ids are all absent from this answer: the Bridge re-keyed
// them. Two identical purchases whose ids are both present stay two rows,
// and a deleted row never returns under a new id.
func (im *importer) reissued(rows []ImportRow, matched []*storedTx, done []bool) {
	newByKey := map[string][]int{}
	for i := range rows {
		if matched[i] == nil && !rows[i].Pending {
			newByKey[rows[i].key] = append(newByKey[rows[i].key], i)
		}
	}
	if len(newByKey) == 0 {
		return
	}
	oldByKey := map[string][]*storedTx{}
	for _, st := range im.byID {
		if st.Pending || st.used || st.ContentKey == nil {
			continue
		}
		if _, ok := newByKey[*st.ContentKey]; ok {
			oldByKey[*st.ContentKey] = append(oldByKey[*st.ContentKey], st)
		}
	}
	for key, olds := range oldByKey {
		sort.Slice(olds, func(a, b int) bool {
			if !olds[a].CreatedAt.Equal(olds[b].CreatedAt) {
				return olds[a].CreatedAt.Before(olds[b].CreatedAt)
			}
			return olds[a].ID.String() < olds[b].ID.String()
		})
		news := newByKey[key]
		for k := 0; k < len(olds) && k < len(news); k++ {
			i := news[k]
			olds[k].used = true
			done[i] = true
			im.alias(rows[i].ExternalID, olds[k].ID, AliasReissued)
			im.step.ReissuedSuppressed++
		}
	}
}

// settlePending updates a stored pending row in place with its posted
// twin when the pair is one-to-one: same account, the exact amount the
// provider sent, dated 0 to MatchDays later, similar description.
// Ambiguous sets are left alone with a warning.
func (im *importer) settlePending(rows []ImportRow, matched []*storedTx, done []bool) {
	// A pending row whose own id comes back posted is updated in place.
	postedHere := map[uuid.UUID]bool{}
	for i := range rows {
		if matched[i] != nil && !rows[i].Pending {
			postedHere[matched[i].ID] = true
		}
	}
	var pendings []*storedTx
	for _, st := range im.byID {
		if st.Pending && st.DeletedAt == nil && !postedHere[st.ID] {
			pendings = append(pendings, st)
		}
	}
	if len(pendings) == 0 {
		return
	}
	sort.Slice(pendings, func(a, b int) bool { return pendings[a].ID.String() < pendings[b].ID.String() })
	candidates := map[*storedTx][]int{}
	perRow := map[int]int{}
	for i := range rows {
		if matched[i] != nil || done[i] || rows[i].Pending {
			continue
		}
		for _, p := range pendings {
			pa, err1 := money.ParseAmountRounded(p.meta.Amount)
			qa, err2 := money.ParseAmountRounded(rows[i].Meta.Amount)
			gap := daysBetween(p.Date, rows[i].Date)
			if err1 != nil || err2 != nil || pa != qa || gap < 0 || gap > im.o.MatchDays || !similar(p.meta, rows[i].Meta) {
				continue
			}
			candidates[p] = append(candidates[p], i)
			perRow[i]++
		}
	}
	for _, p := range pendings {
		c := candidates[p]
		if len(c) == 0 {
			continue
		}
		if len(c) != 1 || perRow[c[0]] != 1 {
			im.step.Warnings = appendWarning(im.step.Warnings, fmt.Sprintf("pending transaction %s has several possible posted matches; left as is", deref(p.ExternalID)))
			continue
		}
		i := c[0]
		done[i] = true
		oldExt := deref(p.ExternalID)
		im.update(p, &rows[i], rows[i].ExternalID)
		im.byExt[rows[i].ExternalID] = p
		if oldExt != "" {
			im.alias(oldExt, p.ID, AliasPendingPosted)
		}
		im.step.PendingReconciled++
	}
}

// loadArrivals reads what a new posted row of the answer may duplicate
// from another door: the account's rows a file or a person wrote in the
// answer's days, of its amounts (see loadArrivalMatcher), and which of
// the account's aliases tie an id to such a row, still there.
func (im *importer) loadArrivals(ctx context.Context, rows []ImportRow) error {
	im.others, im.matched = &rowMatcher{byDayAmount: map[string][]*matchable{}}, map[uuid.UUID]bool{}
	var from, to civil.Date
	var amounts []money.Amount
	for _, r := range rows {
		if r.Pending {
			continue
		}
		amounts = append(amounts, r.Amount)
		if from == "" || r.Date < from {
			from = r.Date
		}
		if r.Date > to {
			to = r.Date
		}
	}
	var targets []uuid.UUID
	for _, id := range im.aliasTo {
		if im.byID[id] == nil {
			targets = append(targets, id)
		}
	}
	for start := 0; start < len(targets); start += 1000 {
		var live []uuid.UUID
		err := im.tx.db.NewSelect().Model((*Transaction)(nil)).Column("id").Where("family_id = ?", im.fam).
			Where("account_id = ?", im.account.ID).Where("deleted_at IS NULL").
			Where("id IN (?)", bun.List(targets[start:min(start+1000, len(targets))])).Scan(ctx, &live)
		if err != nil {
			return dbErr("find matched rows", err)
		}
		for _, id := range live {
			im.matched[id] = true
		}
	}
	if from == "" {
		return nil
	}
	m, _, err := im.tx.loadArrivalMatcher(ctx, im.fam, im.account.ID, SourceSimpleFIN, from, to, amounts)
	if err != nil {
		return err
	}
	im.others = m
	return nil
}

// sameAsOther finds the row of another door that a new posted row is,
// by the fingerprint each had when it arrived: a history imported from
// the bank's file before the connection, then sent again by the sync.
func (im *importer) sameAsOther(r *ImportRow) (uuid.UUID, bool) {
	if r.Pending {
		return uuid.Nil, false
	}
	return im.others.match(r.Date, r.Amount, r.Name, false)
}

func (im *importer) alias(ext string, txID uuid.UUID, reason string) {
	im.aliasTo[ext] = txID
	im.aliases = append(im.aliases, TransactionAlias{AccountID: im.account.ID, FamilyID: im.fam, Source: SourceSimpleFIN,
		ExternalID: ext, TransactionID: txID, Reason: reason, CreatedAt: im.now})
}

func (im *importer) insert(r *ImportRow) {
	meta, _ := json.Marshal(r.Meta)
	src, ext, key, metaS, conn := SourceSimpleFIN, r.ExternalID, r.key, string(meta), im.o.ConnectionID
	im.created = append(im.created, len(im.writes))
	im.writes = append(im.writes, Transaction{ID: NewID(), FamilyID: im.fam, AccountID: im.account.ID, Date: r.Date,
		Amount: r.Amount, Currency: im.account.Currency, Name: r.Name, Notes: r.Notes, ExternalID: &ext, Source: &src,
		Pending: r.Pending, ProviderConnectionID: &conn, ContentKey: &key, ProviderMeta: &metaS,
		CreatedAt: im.now, UpdatedAt: im.now})
	takeFingerprint(&im.writes[len(im.writes)-1])
	im.step.TransactionsCreated++
}

// update writes r over st, keeping every field the user locked; it
// reports false (and writes nothing) when nothing would change, or when a
// finished reconciliation locked the row: the bank's later version of a
// reconciled row is skipped whole.
func (im *importer) update(st *storedTx, r *ImportRow, ext string) bool {
	if st.ReconciliationID != nil {
		return false
	}
	next := *st
	if !st.locked("date") {
		next.Date = r.Date
	}
	if !st.locked("amount") {
		next.Amount = r.Amount
	}
	if !st.locked("name") {
		next.Name = r.Name
	}
	if !st.locked("notes") {
		next.Notes = r.Notes
	}
	next.Pending = r.Pending
	if !r.Pending && st.Excluded && deref(st.ExcludedReason) == "stale_pending" && !st.locked("excluded") {
		next.Excluded, next.ExcludedReason = false, nil
	}
	key := r.key
	next.ExternalID, next.ContentKey, next.meta = &ext, &key, r.Meta
	if next.Date == st.Date && next.Amount == st.Amount && next.Name == st.Name && deref(next.Notes) == deref(st.Notes) &&
		next.Pending == st.Pending && next.Excluded == st.Excluded && deref(next.ExternalID) == deref(st.ExternalID) &&
		deref(next.ContentKey) == deref(st.ContentKey) && next.meta == st.meta && st.ProviderMeta != nil {
		return false
	}
	if st.Excluded && deref(st.ExcludedReason) == ExcludedSplit {
		// A split parent stays excluded whatever the bank says; a new
		// amount leaves its parts as they are, to be reviewed.
		if next.Amount != st.Amount {
			im.review = append(im.review, st.ID)
		}
		if next.Date != st.Date {
			im.redated = append(im.redated, st.ID)
		}
	}
	meta, _ := json.Marshal(r.Meta)
	src, metaS, conn := SourceSimpleFIN, string(meta), im.o.ConnectionID
	im.writes = append(im.writes, Transaction{ID: st.ID, FamilyID: im.fam, AccountID: im.account.ID, Date: next.Date,
		Amount: next.Amount, Currency: im.account.Currency, Name: next.Name, Notes: next.Notes, ExternalID: next.ExternalID,
		Source: &src, Pending: next.Pending, Excluded: next.Excluded, ExcludedReason: next.ExcludedReason,
		ProviderConnectionID: &conn, ContentKey: next.ContentKey, ProviderMeta: &metaS, CreatedAt: st.CreatedAt, UpdatedAt: im.now})
	*st = next
	return true
}

func daysBetween(a, b civil.Date) int {
	ta, err1 := time.Parse(time.DateOnly, string(a))
	tb, err2 := time.Parse(time.DateOnly, string(b))
	if err1 != nil || err2 != nil {
		return -1
	}
	return int(tb.Sub(ta).Hours() / 24)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// alignBalance brings a ledger account to the bank's balance, shown the
// ledger's way: as sent for an asset or untyped account, negated for a
// credit card (debt positive), its absolute value for a loan. The bank
// is the truth for an imported account, whatever rows it never sent, and
// the difference is never income or spending: while the opening balance
// is the account's latest valuation, it is moved (the history the bank
// sent then ends at the bank's figure, as it always did); after a later
// valuation, today's valuation is set to the bank's figure, so the
// difference shows as that valuation's adjustment. It writes only when
// the balance differs.
func (s *Store) alignBalance(ctx context.Context, a *Account, bank money.Amount, today civil.Date) error {
	wrote, err := s.alignValuation(ctx, a, bank, today)
	if err != nil || !wrote {
		return err
	}
	// A valuation moved: the account is rewritten from the full walk, as
	// settleValuations does (see balance_keep.go).
	if err := s.recalculate(ctx, a.FamilyID, a.ID); err != nil && !errors.Is(err, ErrBalanceOverflow) {
		return err
	}
	return nil
}

// alignValuation is alignBalance's valuation write; wrote reports one.
func (s *Store) alignValuation(ctx context.Context, a *Account, bank money.Amount, today civil.Date) (wrote bool, err error) {
	target := bank
	switch a.AccountType {
	case "credit_card":
		target = -bank
	case "loan":
		target = bank.Abs()
	}
	l, err := s.readLedger(ctx, a)
	if err != nil {
		return false, err
	}
	anchors, err := s.readAnchors(ctx, a.FamilyID, a.ID)
	if err != nil {
		return false, err
	}
	now := balanceOn(l, anchors, a.OpeningBalance, today)
	diff := big.NewInt(int64(target))
	if diff.Sub(diff, now); diff.Sign() == 0 || !fits(diff) {
		return false, nil
	}
	latest := -1
	for i, an := range anchors {
		if an.day() <= today {
			latest = i
		}
	}
	if latest <= 0 {
		v, err := s.opening(ctx, a.FamilyID, a.ID)
		if err != nil {
			return false, err
		}
		if latest == 0 && v.ID != anchors[0].ID {
			return true, s.setBalanceOn(ctx, a, target, today)
		}
		shifted := diff.Add(diff, big.NewInt(int64(v.Amount)))
		if !fits(shifted) {
			return false, nil
		}
		v.Amount, v.UpdatedAt = money.Amount(shifted.Int64()), s.now()
		if err := s.updateOne(ctx, v, v.FamilyID, v.ID, "align balance", "amount"); err != nil {
			return false, err
		}
		a.OpeningBalance = v.Amount
		return true, s.mirrorOpening(ctx, v)
	}
	return true, s.setBalanceOn(ctx, a, target, today)
}

// setBalanceOn records, inside the caller's transaction, that account a
// was worth amount at the end of day: today's valuation is created or
// its amount replaced.
func (s *Store) setBalanceOn(ctx context.Context, a *Account, amount money.Amount, day civil.Date) error {
	notes := "Balance reported by the bank"
	res, err := s.db.NewUpdate().Model((*Valuation)(nil)).Set("amount = ?", amount).Set("updated_at = ?", s.now()).
		Where("family_id = ?", a.FamilyID).Where("account_id = ?", a.ID).Where("date = ?", day).Exec(ctx)
	if err != nil {
		return dbErr("align balance", err)
	}
	if n, _ := res.RowsAffected(); n > 0 {
		return nil
	}
	now := s.now()
	_, err = s.db.NewInsert().Model(&Valuation{ID: NewID(), FamilyID: a.FamilyID, AccountID: a.ID, Date: &day,
		Amount: amount, Kind: ValuationReconciliation, Notes: &notes, CreatedAt: now, UpdatedAt: now}).Exec(ctx)
	return dbErr("align balance", err)
}

// followSplitParents marks for review the split parents whose amount an
// import changed, and moves the parts of those whose day it changed to
// the parent's new day.
func (s *Store) followSplitParents(ctx context.Context, familyID uuid.UUID, review, redated []uuid.UUID) error {
	if len(review) > 0 {
		if _, err := s.db.NewUpdate().Model((*Transaction)(nil)).Set("split_needs_review = ?", true).
			Where("family_id = ?", familyID).Where("id IN (?)", bun.List(review)).Exec(ctx); err != nil {
			return dbErr("mark split for review", err)
		}
	}
	if len(redated) > 0 {
		if _, err := s.db.NewUpdate().Model((*Transaction)(nil)).
			Set("date = (SELECT p.date FROM transactions p WHERE p.family_id = t.family_id AND p.id = t.split_parent_id)").
			Set("updated_at = ?", s.now()).
			Where("t.family_id = ?", familyID).Where("t.split_parent_id IN (?)", bun.List(redated)).Exec(ctx); err != nil {
			return dbErr("move split parts", err)
		}
	}
	return nil
}
