-- Each account's cookies files for the video platforms, one per platform.
-- The file itself is stored only encrypted (AES-GCM under a key derived from
-- the Worker's COOKIES_KEY secret, bound to the account and platform): the
-- database never holds it in the clear, and no API answer returns it.
CREATE TABLE platform_cookies (
  account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  platform TEXT NOT NULL,
  -- base64 of the 12-byte nonce and of the ciphertext with its tag
  iv TEXT NOT NULL,
  ciphertext TEXT NOT NULL,
  cookie_count INTEGER NOT NULL CHECK (cookie_count > 0),
  size_bytes INTEGER NOT NULL CHECK (size_bytes > 0),
  -- the latest expiry among the file's cookies (epoch seconds), NULL when all are session cookies
  expires_at INTEGER,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (account_id, platform)
);
