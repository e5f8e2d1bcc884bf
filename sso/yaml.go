package sso

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/google/uuid"
	"go.yaml.in/yaml/v3"

	"coffer/models"
)

// fileProvider is one entry of the legacy provider file: the provider
// settings plus a fixed id, and the client secret inline or named by an
// environment variable.
type fileProvider struct {
	ID                uuid.UUID             `yaml:"id"`
	Strategy          string                `yaml:"strategy"`
	Name              string                `yaml:"name"`
	Label             string                `yaml:"label"`
	Enabled           *bool                 `yaml:"enabled"`
	Issuer            string                `yaml:"issuer"`
	ClientID          string                `yaml:"client_id"`
	ClientSecret      string                `yaml:"client_secret"`
	ClientSecretEnv   string                `yaml:"client_secret_env"`
	Scopes            string                `yaml:"scopes"`
	Prompt            string                `yaml:"prompt"`
	AuthorizationURL  string                `yaml:"authorization_url"`
	TokenURL          string                `yaml:"token_url"`
	UserinfoURL       string                `yaml:"userinfo_url"`
	TokenAuthMethod   string                `yaml:"token_auth_method"`
	IdPMetadataURL    string                `yaml:"idp_metadata_url"`
	IdPEntityID       string                `yaml:"idp_entity_id"`
	IdPSSOURL         string                `yaml:"idp_sso_url"`
	IdPSLOURL         string                `yaml:"idp_slo_url"`
	IdPCertificates   string                `yaml:"idp_certificates"`
	NameIDFormat      string                `yaml:"name_id_format"`
	SubjectSource     string                `yaml:"subject_source"`
	EmailAttribute    string                `yaml:"email_attribute"`
	GroupAttribute    string                `yaml:"group_attribute"`
	SignRequests      bool                  `yaml:"sign_requests"`
	SPPrivateKey      string                `yaml:"sp_private_key"`
	SPCertificate     string                `yaml:"sp_certificate"`
	AllowIdPInitiated bool                  `yaml:"allow_idp_initiated"`
	DefaultRole       string                `yaml:"default_role"`
	GroupMappings     []models.GroupMapping `yaml:"group_mappings"`
	Rules             string                `yaml:"rules"`
}

// FileProvider is a provider read from the file, with its secrets in
// clear for the caller to seal.
type FileProvider struct {
	Provider *models.SSOProvider
	Secrets  ProviderSecrets
}

// ParseProvidersFile reads the legacy provider file (a `providers:` list).
// getenv resolves client_secret_env; main passes os.Getenv, so that only
// main reads the environment. Every problem is reported with the entry it
// is in; nothing is returned unless the whole file is valid.
func ParseProvidersFile(data []byte, getenv func(string) string) ([]FileProvider, error) {
	var doc struct {
		Providers []fileProvider `yaml:"providers"`
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("provider file: %w", err)
	}
	var problems []string
	out := make([]FileProvider, 0, len(doc.Providers))
	seen := map[string]bool{}
	for i, f := range doc.Providers {
		where := fmt.Sprintf("providers[%d] (%s)", i, f.Name)
		if f.ID == uuid.Nil {
			problems = append(problems, where+": id is required (a UUID)")
		}
		if seen[f.Name] || seen[f.ID.String()] {
			problems = append(problems, where+": duplicate name or id")
		}
		seen[f.Name], seen[f.ID.String()] = true, true
		secret := f.ClientSecret
		if f.ClientSecretEnv != "" {
			if secret = getenv(f.ClientSecretEnv); secret == "" {
				problems = append(problems, fmt.Sprintf("%s: environment variable %s is empty", where, f.ClientSecretEnv))
			}
		}
		opt := func(s string) *string {
			if s = strings.TrimSpace(s); s == "" {
				return nil
			}
			return &s
		}
		enabled := f.Enabled == nil || *f.Enabled
		role := f.DefaultRole
		if role == "" {
			role = models.RoleMember
		}
		p := &models.SSOProvider{
			ID: f.ID, Name: f.Name, Strategy: f.Strategy, Label: f.Label, Enabled: enabled, Source: models.SourceYAML,
			Issuer: opt(f.Issuer), ClientID: opt(f.ClientID), Scopes: opt(f.Scopes), Prompt: opt(f.Prompt),
			AuthorizationURL: opt(f.AuthorizationURL), TokenURL: opt(f.TokenURL), UserinfoURL: opt(f.UserinfoURL),
			TokenAuthMethod: opt(f.TokenAuthMethod), IdPMetadataURL: opt(f.IdPMetadataURL), IdPEntityID: opt(f.IdPEntityID),
			IdPSSOURL: opt(f.IdPSSOURL), IdPSLOURL: opt(f.IdPSLOURL), IdPCertificates: opt(f.IdPCertificates),
			NameIDFormat: opt(f.NameIDFormat), SubjectSource: opt(f.SubjectSource), EmailAttribute: opt(f.EmailAttribute),
			GroupAttribute: opt(f.GroupAttribute), SignRequests: f.SignRequests, SPCertificate: opt(f.SPCertificate),
			AllowIdPInitiated: f.AllowIdPInitiated, DefaultRole: role, GroupMappings: f.GroupMappings, Rules: opt(f.Rules),
		}
		out = append(out, FileProvider{Provider: p, Secrets: ProviderSecrets{ClientSecret: secret, SPPrivateKey: f.SPPrivateKey,
			ConfirmSuperAdmin: true}})
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("provider file:\n  %s", strings.Join(problems, "\n  "))
	}
	return out, nil
}

// MirrorFile applies a provider file at start (the yaml mode): every
// entry is validated, its secrets sealed, and the set mirrored into the
// database for every instance, which the registry then announces. An
// unreachable discovery document only warns, so that one identity provider
// being down does not stop the service. getenv resolves client_secret_env.
// Errors name the file.
func (r *Registry) MirrorFile(ctx context.Context, path string, getenv func(string) string) error {
	n, err := r.mirrorFile(ctx, path, getenv)
	if err != nil {
		return fmt.Errorf("AUTH_PROVIDERS_FILE %s: %w", path, err)
	}
	r.log.Info("providers mirrored from file", "file", path, "providers", n)
	return nil
}

func (r *Registry) mirrorFile(ctx context.Context, path string, getenv func(string) string) (int, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	entries, err := ParseProvidersFile(data, getenv)
	if err != nil {
		return 0, err
	}
	var problems []string
	ps := make([]*models.SSOProvider, 0, len(entries))
	for _, e := range entries {
		p := e.Provider
		enabled := p.Enabled
		// Validated as a disabled, existing provider so that discovery is
		// not fetched here; it runs below, as a warning only.
		p.Enabled = false
		errs := ValidateProvider(ctx, p, e.Secrets, false, r.o)
		p.Enabled = enabled
		for field, msg := range errs {
			if w, ok := strings.CutPrefix(field, WarningPrefix); ok {
				r.log.Warn("provider file: "+msg, "provider", p.Name, "field", w)
				continue
			}
			problems = append(problems, fmt.Sprintf("%s: %s: %s", p.Name, field, msg))
		}
		if p.Strategy == models.StrategyOIDC && enabled {
			if err := CheckDiscovery(ctx, models.Str(p.Issuer), r.o.HTTPClient); err != nil {
				r.log.Warn("provider file: discovery check failed; the provider stays configured", "provider", p.Name, "err", err)
			}
		}
		if err := r.store.SetProviderSecret(p, models.ColClientSecret, e.Secrets.ClientSecret); err != nil {
			return 0, err
		}
		if err := r.store.SetProviderSecret(p, models.ColSPPrivateKey, e.Secrets.SPPrivateKey); err != nil {
			return 0, err
		}
		ps = append(ps, p)
	}
	if len(problems) > 0 {
		return 0, fmt.Errorf("provider file:\n  %s", strings.Join(problems, "\n  "))
	}
	if err := r.store.MirrorFileProviders(ctx, ps); err != nil {
		return 0, err
	}
	if err := r.Changed(ctx); err != nil {
		r.log.Warn("provider change not announced", "err", err)
	}
	return len(ps), nil
}
