package rest

import (
	"strconv"

	"github.com/gofiber/fiber/v2"

	"coffer/api/httperr"
	"coffer/models"
)

const (
	defaultPerPage = 25
	maxPerPage     = 100
)

// Pagination is the page report of every list response.
type Pagination struct {
	Page       int `json:"page"`
	PerPage    int `json:"per_page"`
	TotalCount int `json:"total_count"`
	TotalPages int `json:"total_pages"`
}

// parsePage reads page and per_page: integers from 1, per_page capped at
// 100 (the capped value is what the response reports).
func parsePage(c *fiber.Ctx) (models.Page, error) {
	p := models.Page{Number: 1, Size: defaultPerPage}
	for _, q := range []struct {
		name string
		dst  *int
	}{{"page", &p.Number}, {"per_page", &p.Size}} {
		raw := c.Query(q.name)
		if raw == "" {
			continue
		}
		n, err := strconv.Atoi(raw)
		if err != nil || n < 1 {
			return p, httperr.BadRequest(q.name + " must be a whole number of at least 1")
		}
		*q.dst = n
	}
	if p.Size > maxPerPage {
		p.Size = maxPerPage
	}
	// A page so far out that its offset would overflow holds nothing;
	// keep the number the client sent but stop the arithmetic growing.
	if p.Number > 1_000_000_000 {
		p.Number = 1_000_000_000
	}
	return p, nil
}

func pagination(p models.Page, total int) Pagination {
	return Pagination{Page: p.Number, PerPage: p.Size, TotalCount: total, TotalPages: p.Pages(total)}
}

// pageMeta is the reference's page report of a {data, meta} list (rules,
// rule runs, imports); the other lists report a Pagination.
type pageMeta struct {
	CurrentPage int  `json:"current_page"`
	NextPage    *int `json:"next_page"`
	PrevPage    *int `json:"prev_page"`
	TotalPages  int  `json:"total_pages"`
	TotalCount  int  `json:"total_count"`
	PerPage     int  `json:"per_page"`
}

func metaOf(p models.Page, total int) pageMeta {
	m := pageMeta{CurrentPage: p.Number, TotalPages: p.Pages(total), TotalCount: total, PerPage: p.Size}
	if p.Number < m.TotalPages {
		m.NextPage = models.Ptr(p.Number + 1)
	}
	if p.Number > 1 {
		m.PrevPage = models.Ptr(min(p.Number-1, m.TotalPages))
	}
	return m
}
