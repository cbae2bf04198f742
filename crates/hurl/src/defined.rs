//! The variables a run of a scenario file is given from outside it, as Hurl
//! takes them: `HURL_name` environment variables (Hurl 7's spelling, which
//! Hurl 8 replaced and scripts still export), then `HURL_VARIABLE_name` and
//! `HURL_SECRET_name` ones, then each `--variables-file` (lines `name=value`, `#` comments),
//! then `--variable` and `--secret` (a later one replaces an earlier one of the
//! same name). A secret is a variable whose value is never shown: the caller
//! redacts its values from what it prints ([`Defined::redact`]).

use std::path::PathBuf;

/// The variables given, in the order they apply, and the secrets' values.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Defined {
    pub vars: Vec<(String, String)>,
    pub secrets: Vec<String>,
}

impl Defined {
    /// Gathers them; `env` is the process's environment. The error says what to fix.
    pub fn gather(
        variables: &[String],
        files: &[PathBuf],
        secrets: &[String],
        env: impl IntoIterator<Item = (String, String)>,
    ) -> Result<Defined, String> {
        let mut d = Defined::default();
        let mut env: Vec<(String, String)> = env.into_iter().collect();
        env.sort();
        // Hurl 7's `HURL_name` first, so that Hurl 8's spelling wins where both are set.
        for (k, v) in &env {
            if let Some(name) = k.strip_prefix("HURL_").filter(|n| crate::parse::is_var_name(n))
                && !k.starts_with("HURL_VARIABLE_")
                && !k.starts_with("HURL_SECRET_")
            {
                d.set(name, v);
            }
        }
        for (k, v) in env {
            if let Some(name) = k.strip_prefix("HURL_VARIABLE_").filter(|n| !n.is_empty()) {
                d.set(name, &v);
            } else if let Some(name) = k.strip_prefix("HURL_SECRET_").filter(|n| !n.is_empty()) {
                d.set(name, &v);
                d.secrets.push(v);
            }
        }
        for f in files {
            let text =
                std::fs::read_to_string(f).map_err(|e| format!("--variables-file {}: {e}", f.display()))?;
            for (n, line) in text.lines().enumerate() {
                let line = line.trim();
                if line.is_empty() || line.starts_with('#') {
                    continue;
                }
                let (k, v) = line.split_once('=').ok_or_else(|| {
                    format!("--variables-file {}:{}: write NAME=VALUE, not {line:?}", f.display(), n + 1)
                })?;
                d.set(k.trim(), v);
            }
        }
        for v in variables {
            let (k, value) = pair(v, "--variable")?;
            d.set(k, value);
        }
        for s in secrets {
            let (k, value) = pair(s, "--secret")?;
            d.set(k, value);
            d.secrets.push(value.to_owned());
        }
        Ok(d)
    }

    fn set(&mut self, name: &str, value: &str) {
        self.vars.retain(|(k, _)| k != name);
        self.vars.push((name.to_owned(), value.to_owned()));
    }

    /// `text` with every secret value replaced by `***`.
    pub fn redact(&self, text: &str) -> String {
        let mut out = text.to_owned();
        for s in self.secrets.iter().filter(|s| !s.is_empty()) {
            out = out.replace(s.as_str(), "***");
        }
        out
    }
}

fn pair<'s>(s: &'s str, flag: &str) -> Result<(&'s str, &'s str), String> {
    match s.split_once('=') {
        Some((k, v)) if crate::parse::is_var_name(k) => Ok((k, v)),
        _ => Err(format!(
            "{flag} {s:?}: write NAME=VALUE (a name is a letter, then letters, digits, `_` or `-`)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn later_sources_win_and_secrets_are_redacted() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("vars.env");
        std::fs::write(&file, "# a comment\nhost=http://h\nuser=ann\n\n").unwrap();
        let env = [
            ("HURL_VARIABLE_user".into(), "env".into()),
            ("HURL_user".into(), "legacy".into()),
            ("HURL_SECRET_token".into(), "s3cr3t".into()),
            ("PATH".into(), "/bin".into()),
        ];
        let d = Defined::gather(&["user=bob".into()], std::slice::from_ref(&file), &["pin=1234".into()], env)
            .unwrap();
        assert_eq!(
            d.vars,
            [("token", "s3cr3t"), ("host", "http://h"), ("user", "bob"), ("pin", "1234")]
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
        );
        assert_eq!(d.redact("token s3cr3t, pin 1234"), "token ***, pin ***");
        // Hurl 7's `HURL_name`, where nothing later sets the name; not a secret's value.
        let d = Defined::gather(&[], &[], &[], [("HURL_name".into(), "Bob".into())]).unwrap();
        assert_eq!(d.vars, [("name".to_owned(), "Bob".to_owned())]);
        assert!(d.secrets.is_empty());
        std::fs::write(&file, "oops\n").unwrap();
        assert!(Defined::gather(&[], &[file], &[], []).unwrap_err().contains(":1: write NAME=VALUE"));
        assert!(Defined::gather(&["1x=2".into()], &[], &[], []).is_err());
    }
}
