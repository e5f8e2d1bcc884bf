package models

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// Category groups transactions for budgets and reports; one level of
// subcategories under a parent.
type Category struct {
	bun.BaseModel `bun:"table:categories,alias:c"`

	ID             uuid.UUID  `bun:"id,pk"`
	FamilyID       uuid.UUID  `bun:"family_id"`
	ParentID       *uuid.UUID `bun:"parent_id"`
	Name           string     `bun:"name"`
	Color          string     `bun:"color"`
	Icon           string     `bun:"icon"`
	Classification string     `bun:"classification"` // income or expense
	CreatedAt      time.Time  `bun:"created_at"`
	UpdatedAt      time.Time  `bun:"updated_at"`

	ParentName         *string `bun:"parent_name,scanonly"`
	SubcategoriesCount int     `bun:"subcategories_count,scanonly"`
}

// categorySelect reads categories with their parent's name and the number
// of their subcategories, both within the family.
func (s *Store) categorySelect(c any, familyID uuid.UUID) *bun.SelectQuery {
	return s.db.NewSelect().Model(c).
		ColumnExpr("c.*").
		ColumnExpr("p.name AS parent_name").
		ColumnExpr("(SELECT count(*) FROM categories sc WHERE sc.parent_id = c.id AND sc.family_id = c.family_id) AS subcategories_count").
		Join("LEFT JOIN categories AS p ON p.id = c.parent_id AND p.family_id = c.family_id").
		Where("c.family_id = ?", familyID)
}

// Categories lists a page of the family's categories by name.
func (s *Store) Categories(ctx context.Context, familyID uuid.UUID, p Page) ([]Category, int, error) {
	var cs []Category
	n, err := p.scan(ctx, s.categorySelect(&cs, familyID).OrderExpr("lower(c.name) ASC, c.id ASC"))
	return cs, n, dbErr("list categories", err)
}

// Category returns one category of the family.
func (s *Store) Category(ctx context.Context, familyID, id uuid.UUID) (*Category, error) {
	c := new(Category)
	err := s.categorySelect(c, familyID).Where("c.id = ?", id).Scan(ctx)
	return c, dbErr("get category", err)
}

// CreateCategory inserts a category. A parent must be a top-level category
// of the same family.
func (s *Store) CreateCategory(ctx context.Context, c *Category) error {
	c.ID = NewID()
	c.CreatedAt = s.now()
	c.UpdatedAt = c.CreatedAt
	return s.RunInTx(ctx, func(tx *Store) error {
		if err := tx.checkParent(ctx, c); err != nil {
			return err
		}
		_, err := tx.db.NewInsert().Model(c).Exec(ctx)
		return dbErr("create category", err)
	})
}

// UpdateCategory writes the named columns of a category of c.FamilyID.
func (s *Store) UpdateCategory(ctx context.Context, c *Category, columns ...string) error {
	c.UpdatedAt = s.now()
	return s.RunInTx(ctx, func(tx *Store) error {
		if err := tx.checkParent(ctx, c); err != nil {
			return err
		}
		return tx.updateOne(ctx, c, c.FamilyID, c.ID, "update category", columns...)
	})
}

func (s *Store) checkParent(ctx context.Context, c *Category) error {
	if c.ParentID == nil {
		return nil
	}
	if *c.ParentID == c.ID {
		return Invalid("A category cannot be its own parent")
	}
	parent, err := s.Category(ctx, c.FamilyID, *c.ParentID)
	if err == ErrNotFound {
		return Invalid("Parent category " + c.ParentID.String() + " not found")
	}
	if err != nil {
		return err
	}
	if parent.ParentID != nil {
		return Invalid("Parent category must be a top-level category")
	}
	if c.ID != uuid.Nil {
		n, err := s.db.NewSelect().Model((*Category)(nil)).
			Where("family_id = ?", c.FamilyID).Where("parent_id = ?", c.ID).Count(ctx)
		if err != nil {
			return dbErr("count subcategories", err)
		}
		if n > 0 {
			return Invalid("A category with subcategories cannot have a parent")
		}
	}
	return nil
}

// DeleteCategory removes a category; its transactions become uncategorised
// and its subcategories top-level.
func (s *Store) DeleteCategory(ctx context.Context, familyID, id uuid.UUID) error {
	// Rules may name it: the family's compiled rules are read again.
	return s.RunInTx(ctx, func(tx *Store) error {
		if err := tx.deleteOne(ctx, (*Category)(nil), familyID, id, "delete category"); err != nil {
			return err
		}
		return tx.rulesChanged(ctx)
	})
}

// mergeBudgetLinesSQL adds what budgets give category ?1 to what they
// give category ?2 where a budget has both; moveBudgetLinesSQL hands the
// rest of ?1's budget rows to ?2.
const (
	mergeBudgetLinesSQL = `
UPDATE budget_categories SET
    budgeted_spending = budgeted_spending + (SELECT s.budgeted_spending FROM budget_categories s
        WHERE s.family_id = ?0 AND s.budget_id = budget_categories.budget_id AND s.category_id = ?1),
    updated_at = ?3
WHERE family_id = ?0 AND category_id = ?2
  AND budget_id IN (SELECT s.budget_id FROM budget_categories s WHERE s.family_id = ?0 AND s.category_id = ?1)`
	moveBudgetLinesSQL = `
UPDATE budget_categories SET category_id = ?2, updated_at = ?3
WHERE family_id = ?0 AND category_id = ?1
  AND budget_id NOT IN (SELECT d.budget_id FROM budget_categories d WHERE d.family_id = ?0 AND d.category_id = ?2)`
)

// MergeCategories moves everything of category source into target and
// deletes source, in one transaction: its transactions, its
// subcategories, and (when target is an expense category) its budget
// amounts, added to target's. Merging a category into its own
// subcategory makes that subcategory top-level in its place. It returns
// how many transactions moved. A category of another family is
// ErrNotFound.
func (s *Store) MergeCategories(ctx context.Context, familyID, sourceID, targetID uuid.UUID) (moved int, err error) {
	if sourceID == targetID {
		return 0, Invalid("A category cannot be merged into itself")
	}
	err = s.RunInTx(ctx, func(tx *Store) error {
		source, err := tx.Category(ctx, familyID, sourceID)
		if err != nil {
			return err
		}
		target, err := tx.Category(ctx, familyID, targetID)
		if err != nil {
			return err
		}
		intoChild := target.ParentID != nil && *target.ParentID == source.ID
		if source.SubcategoriesCount > 0 && target.ParentID != nil && !intoChild {
			return Invalid("A category with subcategories can only be merged into a top-level category")
		}
		now := tx.now()
		res, err := tx.db.NewUpdate().Model((*Transaction)(nil)).
			Set("category_id = ?", targetID).Set("updated_at = ?", now).
			Where("family_id = ?", familyID).Where("category_id = ?", sourceID).Exec(ctx)
		if err != nil {
			return dbErr("merge category transactions", err)
		}
		n, _ := res.RowsAffected()
		moved = int(n)
		if intoChild {
			if _, err := tx.db.NewUpdate().Model((*Category)(nil)).Set("parent_id = ?", source.ParentID).Set("updated_at = ?", now).
				Where("family_id = ?", familyID).Where("id = ?", targetID).Exec(ctx); err != nil {
				return dbErr("merge category parent", err)
			}
		}
		if _, err := tx.db.NewUpdate().Model((*Category)(nil)).Set("parent_id = ?", targetID).Set("updated_at = ?", now).
			Where("family_id = ?", familyID).Where("parent_id = ?", sourceID).Where("id <> ?", targetID).Exec(ctx); err != nil {
			return dbErr("merge subcategories", err)
		}
		if target.Classification == "expense" {
			for _, q := range []string{mergeBudgetLinesSQL, moveBudgetLinesSQL} {
				if _, err := tx.db.NewRaw(q, familyID, sourceID, targetID, now).Exec(ctx); err != nil {
					return dbErr("merge budget lines", err)
				}
			}
		}
		return tx.DeleteCategory(ctx, familyID, sourceID)
	})
	return moved, err
}
