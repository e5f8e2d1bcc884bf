package models_test

import (
	"context"
	"io"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"coffer/models"
	"coffer/models/civil"
	"coffer/models/modelstest"
)

// queryLog records every statement the store sends.
type queryLog struct {
	mu    sync.Mutex
	stmts []string
}

func (l *queryLog) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context { return ctx }

func (l *queryLog) AfterQuery(_ context.Context, e *bun.QueryEvent) {
	l.mu.Lock()
	l.stmts = append(l.stmts, e.Query)
	l.mu.Unlock()
}

// tableRef finds the tables a statement reads or changes, with their
// aliases.
var tableRef = regexp.MustCompile(`(?i)\b(?:FROM|JOIN|UPDATE)\s+"?([a-z_]+)"?(?:\s+(?:AS\s+)?"?([a-z_]+)"?)?`)

// familyValue matches a family_id compared with a value (bun writes the
// arguments into the statement it reports).
var familyValue = regexp.MustCompile(`(?i)family_id"?\s*(=|IN)\s*\(?\s*('|\?|\$[0-9])`)

// sqlWords are words that may follow a table name where an alias would.
var sqlWords = map[string]bool{"where": true, "on": true, "join": true, "left": true, "inner": true, "cross": true,
	"group": true, "order": true, "limit": true, "offset": true, "set": true, "using": true, "union": true,
	"returning": true, "lateral": true, "values": true, "select": true, "for": true, "as": true}

// unscopedRefs returns the tenant tables statement q reads or changes
// without comparing their family_id: each reference must have its
// alias.family_id compared (= or IN), or, when it is the statement's only
// table, a bare family_id.
func unscopedRefs(q string, tenant func(string) bool) (refs int, unscoped []string) {
	type ref struct{ table, alias string }
	var found []ref
	for _, m := range tableRef.FindAllStringSubmatch(q, -1) {
		table, alias := strings.ToLower(m[1]), strings.ToLower(m[2])
		if !tenant(table) {
			continue
		}
		if alias == "" || sqlWords[alias] {
			alias = table
		}
		found = append(found, ref{table, alias})
	}
	// Joins on family_id keep families apart only when one side is
	// compared with a family's id.
	if len(found) > 0 && !familyValue.MatchString(q) {
		for _, r := range found {
			unscoped = append(unscoped, r.table)
		}
		return len(found), unscoped
	}
	for _, r := range found {
		col := `"?` + regexp.QuoteMeta(r.alias) + `"?\."?family_id"?`
		scoped := regexp.MustCompile(`(?i)` + col + `\s*(=|IN\b)|=\s*` + col).MatchString(q)
		if !scoped && len(found) == 1 {
			scoped = regexp.MustCompile(`(?i)(^|[^."\w])"?family_id"?\s*(=|IN\b)`).MatchString(q)
		}
		if !scoped {
			unscoped = append(unscoped, r.table)
		}
	}
	return len(found), unscoped
}

func TestUnscopedRefs(t *testing.T) {
	tenant := func(table string) bool { return table != "families" }
	for _, c := range []struct {
		q    string
		want string
	}{
		{`SELECT * FROM "accounts" AS "a" WHERE (family_id = '1') AND (id = '2')`, ""},
		{`SELECT * FROM accounts WHERE id = '2'`, "accounts"},
		{`SELECT "a"."family_id" FROM "accounts" AS "a" WHERE id = '2'`, "accounts"},
		{`SELECT * FROM transactions AS t JOIN accounts AS a ON a.id = t.account_id WHERE t.family_id = '1'`, "accounts"},
		{`SELECT * FROM transactions AS t JOIN accounts AS a ON a.id = t.account_id AND a.family_id = t.family_id WHERE t.family_id = '1'`, ""},
		{`UPDATE "transactions" AS "t" SET name = 'x' WHERE (id = '2')`, "transactions"},
		{`DELETE FROM tags WHERE family_id IN ('1')`, ""},
		{`SELECT * FROM families WHERE id = '1'`, ""},
		{`SELECT * FROM api_keys AS k JOIN users AS u ON u.id = k.user_id AND u.family_id = k.family_id WHERE k.key_hash = 'h'`, "api_keys,users"},
	} {
		_, got := unscopedRefs(c.q, tenant)
		if strings.Join(got, ",") != c.want {
			t.Errorf("%s: unscoped %v, want %q", c.q, got, c.want)
		}
	}
}

// unscopedStatements are the statements on tenant tables known to run
// without a family's id, by a substring that identifies each, with the
// reason. On a database distributed by family the doors would need the
// family in what they look up (a key, token or signature that names it);
// the sweeps may go to every node.
var unscopedStatements = map[string]string{
	"k.key_hash = ":                    "door: APIKeyBySecret finds the family from the presented key",
	"s.token_hash = ":                  "door: SessionByToken finds the family from the session cookie",
	"si.subject = ":                    "door: IdentityBySubject finds the family from a provider's subject at sign-in",
	"lower(u.email) = lower(":          "door: UserByEmail at sign-in; emails are unique across the instance",
	"inv.token_hash = ":                "door: InvitationByToken finds the family from the invitation link",
	"cf.token_hash = ":                 "door: CalendarFeedByToken finds the family from the calendar address",
	"ocd.signature = ":                 "door: the OAuth server finds a code by its signature",
	"opk.signature = ":                 "door: the OAuth server finds a PKCE request by its signature",
	"ot.signature = ":                  "door: the OAuth server finds a token by its signature",
	"msg.chat_id AS id, msg.id AS":     "sweep: ChatsAwaitingReply, the worker's restart of every family's pending replies",
	`"im" WHERE (status IN`:            "sweep: ImportsInFlight, the scheduler's requeue of every family's stalled imports",
	`"fe" WHERE (status IN`:            "sweep: FamilyExportsInFlight, the scheduler's requeue of every family's stalled exports",
	`DISTINCT family_id FROM "webhook`: "sweep: WebhookFamilies, the scheduler's list of families with webhooks to feed",
	`DISTINCT family_id FROM "notif`:   "sweep: NotifyFamilies, the list of families where someone asked for email",
	`"no" WHERE ((status = `:           "sweep: UnsentNotifications, the hourly requeue of every family's unsent emails",
}

// TestQueriesNameFamily runs the main read paths of the store for one
// family (and the writes that build it) and fails on any statement that
// reads or changes a tenant table without comparing its family_id: on a database
// distributed by family, such a statement would go to every node, and on
// this one it is a query that could cross families.
func TestQueriesNameFamily(t *testing.T) {
	ctx := context.Background()
	base := modelstest.NewStore(t)
	schema := schemaTables(t, base.DB())
	log := &queryLog{}
	s := models.NewStore(base.DB().WithQueryHook(log))
	s.Secrets = base.Secrets
	b := newExportBook(t, s, "Tenant")
	fam, user := b.f.Family.ID, b.f.User.ID
	page := models.Page{Number: 1, Size: 50}
	period := models.Period{From: "2026-01-01", To: "2026-03-31"}
	run := func(name string, err error) {
		t.Helper()
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	var err error
	_, err = s.Family(ctx, fam)
	run("Family", err)
	_, err = s.FamilyCurrencies(ctx, fam)
	run("FamilyCurrencies", err)
	_, err = s.User(ctx, fam, user)
	run("User", err)
	_, err = s.APIKeys(ctx, fam, user)
	run("APIKeys", err)
	_, err = s.Invitations(ctx, fam)
	run("Invitations", err)
	_, _, err = s.Accounts(ctx, fam, page)
	run("Accounts", err)
	_, err = s.Account(ctx, fam, b.f.Account.ID)
	run("Account", err)
	_, _, err = s.Transactions(ctx, fam, models.TransactionFilter{WithSplitParents: true}, page)
	run("Transactions", err)
	_, _, err = s.Transactions(ctx, fam, models.TransactionFilter{Search: "costco", TagIDs: []uuid.UUID{b.tag.ID},
		CategoryIDs: []uuid.UUID{b.food.ID}, Uncategorized: true, Kinds: []string{"expense", "transfer"}}, page)
	run("Transactions (search)", err)
	_, err = s.TransactionTotals(ctx, fam, models.TransactionFilter{Search: "costco"})
	run("TransactionTotals", err)
	_, err = s.Transaction(ctx, fam, b.plain.ID)
	run("Transaction", err)
	_, _, err = s.AccountRegister(ctx, fam, b.f.Account.ID, page)
	run("AccountRegister", err)
	_, _, err = s.Transfers(ctx, fam, page)
	run("Transfers", err)
	_, err = s.IncomeStatement(ctx, fam, period)
	run("IncomeStatement", err)
	_, err = s.CategoryTotals(ctx, fam, period)
	run("CategoryTotals", err)
	_, err = s.BalanceSheet(ctx, fam, false)
	run("BalanceSheet", err)
	_, err = s.Forecast(ctx, fam, models.ForecastDays)
	run("Forecast", err)
	_, err = s.NetWorthSeries(ctx, fam, period, models.Month)
	run("NetWorthSeries", err)
	_, err = s.AccountBalanceSeries(ctx, fam, b.f.Account.ID, period, models.Week)
	run("AccountBalanceSeries", err)
	_, err = s.AccountTotals(ctx, fam, period, nil)
	run("AccountTotals", err)
	_, _, err = s.Budgets(ctx, fam, models.BudgetFilter{}, page)
	run("Budgets", err)
	_, err = s.BudgetForMonth(ctx, fam, civil.Date("2026-01-15"))
	run("BudgetForMonth", err)
	_, _, err = s.BudgetLines(ctx, fam, models.BudgetLineFilter{}, page)
	run("BudgetLines", err)
	_, _, err = s.Categories(ctx, fam, page)
	run("Categories", err)
	_, err = s.Category(ctx, fam, b.food.ID)
	run("Category", err)
	_, err = s.Merchants(ctx, fam)
	run("Merchants", err)
	_, err = s.Tags(ctx, fam)
	run("Tags", err)
	_, _, err = s.ListRules(ctx, fam, models.RuleFilter{}, page)
	run("ListRules", err)
	_, err = s.Rule(ctx, fam, b.rule.ID)
	run("Rule", err)
	_, err = s.ActiveRules(ctx, fam)
	run("ActiveRules", err)
	_, _, err = s.RuleRuns(ctx, fam, models.RuleRunFilter{}, page)
	run("RuleRuns", err)
	chats, _, err := s.Chats(ctx, fam, user, page)
	run("Chats", err)
	for _, c := range chats {
		_, err = s.Chat(ctx, fam, user, c.ID)
		run("Chat", err)
		_, _, err = s.Messages(ctx, fam, user, c.ID, page)
		run("Messages", err)
		_, err = s.ChatProposals(ctx, fam, user, c.ID)
		run("ChatProposals", err)
	}
	_, _, err = s.Valuations(ctx, fam, models.ValuationFilter{}, page)
	run("Valuations", err)
	_, err = s.AccountValuations(ctx, fam, b.savings.ID)
	run("AccountValuations", err)
	_, _, err = s.Reconciliations(ctx, fam, b.f.Account.ID, page)
	run("Reconciliations", err)
	_, _, err = s.ExchangeRates(ctx, fam, models.RateFilter{}, page)
	run("ExchangeRates", err)
	_, _, err = s.FamilyExports(ctx, fam, page)
	run("FamilyExports", err)
	_, err = s.Webhooks(ctx, fam)
	run("Webhooks", err)
	_, err = s.TransactionFeed(ctx, fam, models.FeedPosition{}, 50)
	run("TransactionFeed", err)
	_, err = s.TransactionDeletions(ctx, fam, time.Time{})
	run("TransactionDeletions", err)
	_, _, err = s.Imports(ctx, fam, models.ImportFilter{}, page)
	run("Imports", err)
	_, err = s.ImportMappings(ctx, fam)
	run("ImportMappings", err)
	_, _, err = s.Connections(ctx, fam, page)
	run("Connections", err)
	_, _, err = s.Syncs(ctx, fam, models.SyncFilter{}, page)
	run("Syncs", err)
	_, err = s.Restores(ctx, fam, 10)
	run("Restores", err)
	_, err = s.FamilyResetCounts(ctx, fam)
	run("FamilyResetCounts", err)
	run("WriteFamilyData", s.WriteFamilyData(ctx, fam, io.Discard)) // reads every table a family has rows in
	_, err = s.UpcomingRecurring(ctx, fam, "2026-12-31", 100)
	run("UpcomingRecurring", err)
	_, err = s.RecurringOccurrences(ctx, fam, models.OccurrenceFilter{Status: models.OccurrenceMissed, DueFrom: "2026-01-01"})
	run("RecurringOccurrences", err)
	_, err = s.MarkMissedRecurring(ctx, fam)
	run("MarkMissedRecurring", err)
	calToken, err := s.NewCalendarFeed(ctx, fam, user)
	run("NewCalendarFeed", err)
	_, err = s.CalendarFeedOf(ctx, fam, user)
	run("CalendarFeedOf", err)
	rr, err := s.CreateAllRulesRun(ctx, fam)
	run("CreateAllRulesRun", err)
	if err == nil {
		_, _, err = s.RuleRunStep(ctx, fam, rr.ID, 100)
		run("RuleRunStep", err)
	}

	// A person's browser sessions and links to identity providers.
	sess := &models.Session{FamilyID: fam, UserID: user, Method: models.MethodPassword}
	sessToken, err := s.CreateSession(ctx, sess, time.Hour)
	run("CreateSession", err)
	run("TouchSession", s.TouchSession(ctx, fam, sess.ID))
	_, err = s.UserSessions(ctx, fam, user)
	run("UserSessions", err)
	_, err = s.CountUserSessions(ctx, fam, user)
	run("CountUserSessions", err)
	run("DeleteUserSessions", s.DeleteUserSessions(ctx, fam, user, sess.ID))
	_, err = s.UserIdentities(ctx, fam, user)
	run("UserIdentities", err)
	_, _ = s.LatestMappedIdentity(ctx, fam, user, (*models.SSOProvider).HasMappings) // none: ErrNotFound

	// The doors, which find the family from what a request presents, and
	// the sweeps of the worker, which span families: not errors, only the
	// statements they send.
	_, err = s.SessionByToken(ctx, sessToken, time.Hour)
	run("SessionByToken", err)
	run("DeleteSession", s.DeleteSession(ctx, fam, sess.ID))
	_, _ = s.IdentityBySubject(ctx, uuid.New(), "unknown")
	_, err = s.APIKeyBySecret(ctx, b.f.Key)
	run("APIKeyBySecret", err)
	_, err = s.UserByEmail(ctx, b.f.User.Email)
	run("UserByEmail", err)
	_, err = s.CalendarFeedByToken(ctx, calToken)
	run("CalendarFeedByToken", err)
	run("DeleteCalendarFeed", s.DeleteCalendarFeed(ctx, fam, user))
	_, _ = s.InvitationByToken(ctx, "unknown")
	_, _ = s.OAuthCodeBySignature(ctx, "unknown")
	_, _ = s.OAuthPKCEBySignature(ctx, "unknown")
	_, _ = s.OAuthTokenBySignature(ctx, "access", "unknown")
	_, err = s.ChatsAwaitingReply(ctx)
	run("ChatsAwaitingReply", err)
	_, err = s.ImportsInFlight(ctx)
	run("ImportsInFlight", err)
	_, err = s.FamilyExportsInFlight(ctx)
	run("FamilyExportsInFlight", err)
	_, err = s.WebhookFamilies(ctx)
	run("WebhookFamilies", err)
	_, err = s.NotifyFamilies(ctx, true)
	run("NotifyFamilies", err)
	_, err = s.UnsentNotifications(ctx, time.Now(), 10)
	run("UnsentNotifications", err)

	log.mu.Lock()
	stmts := log.stmts
	log.mu.Unlock()
	tenant := func(table string) bool {
		_, inst := instanceTables[table]
		return schema[table] != nil && !inst
	}
	bad, used := map[string]bool{}, map[string]bool{}
	checked := 0
	for _, q := range stmts {
		n, unscoped := unscopedRefs(q, tenant)
		checked += n
		for _, table := range unscoped {
			if sub := known(q); sub != "" {
				used[sub] = true
			} else {
				bad[table+": "+q] = true
			}
		}
	}
	var lines []string
	for l := range bad {
		lines = append(lines, l)
	}
	sort.Strings(lines)
	for _, l := range lines {
		t.Errorf("statement without family_id on %s", l)
	}
	for sub, why := range unscopedStatements {
		if !used[sub] {
			t.Errorf("unscopedStatements lists %q (%s), which no statement needs any more", sub, why)
		}
	}
	t.Logf("%d statements, %d references to tenant tables", len(stmts), checked)
}

// known returns the key of unscopedStatements that matches q, if any.
func known(q string) string {
	for sub := range unscopedStatements {
		if strings.Contains(q, sub) {
			return sub
		}
	}
	return ""
}
