package store

import (
	"context"
	"encoding/json"
	"fmt"
)

// Setting keys used across hoard.
const (
	// SettingUsersCanCurate opens catalog curation to every signed-in user.
	SettingUsersCanCurate = "users_can_curate"
)

// GetSetting decodes the JSON value stored under key into dst and reports
// whether the key exists; dst is untouched when it does not.
func (db *DB) GetSetting(ctx context.Context, key string, dst any) (bool, error) {
	var raw []byte
	err := db.q.QueryRow(ctx, `SELECT value FROM settings WHERE key = $1`, key).Scan(&raw)
	if err != nil {
		if isNoRows(err) {
			return false, nil
		}
		return false, wrap("get setting "+key, err)
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		return false, fmt.Errorf("get setting %s: decode: %w", key, err)
	}
	return true, nil
}

// SetSetting stores value as JSON under key.
func (db *DB) SetSetting(ctx context.Context, key string, value any) error {
	raw, err := json.Marshal(value)
	if err != nil {
		return fmt.Errorf("set setting %s: encode: %w", key, err)
	}
	_, err = db.q.Exec(ctx, `INSERT INTO settings (key, value) VALUES ($1, $2)
		ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = now()`, key, raw)
	return wrap("set setting "+key, err)
}

// DeleteSetting removes a key; a missing key is fine.
func (db *DB) DeleteSetting(ctx context.Context, key string) error {
	_, err := db.q.Exec(ctx, `DELETE FROM settings WHERE key = $1`, key)
	return wrap("delete setting "+key, err)
}
