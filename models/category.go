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
		res, err := tx.db.NewUpdate().Model(c).
			Column(append(columns, "updated_at")...).
			Where("c.family_id = ?", c.FamilyID).
			Where("c.id = ?", c.ID).
			Exec(ctx)
		return affectedOne(res, err, "update category")
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
	return s.deleteOne(ctx, (*Category)(nil), familyID, id, "delete category")
}
