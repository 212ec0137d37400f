//! `make token TENANT=acme [ROLE=admin|operator] [SCOPES="outbound/read outbound/write"]`:
//! prints a development access token for the tenant, valid for 24 hours, of an administrator
//! (a member of `admins`, D32) unless `--member` asks for a member of no group, whose `scope`
//! claim holds the scopes given (any scopes, space or comma separated, D25; none by default).
//! A scope that makes a role (`outbound/admin`, `outbound/operator`; `ROLE` adds it) comes with
//! its group in `cognito:groups` (`admins`, `operators`), as Cognito gives a member of that
//! group (D29).
//!
//! Usage: `dev-token [--member] [TENANT [SCOPE...]]`.

use outbound_auth::{Scope, ADMINS};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let member = args.iter().any(|arg| arg == "--member");
    let mut args = args.into_iter().filter(|arg| arg != "--member");
    let tenant = args.next().unwrap_or_else(|| "acme".into());
    let scopes: Vec<String> = args
        .flat_map(|arg| {
            arg.split([',', ' '])
                .filter(|scope| !scope.is_empty())
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .collect();
    let lookup = |name: &str| match name {
        "AUTH_MODE" => Some("local".to_owned()),
        "OUTBOUND_DEV_STACK" => Some("true".to_owned()),
        other => std::env::var(other).ok(),
    };
    let auth = outbound_auth::AuthConfig::from_lookup(&lookup).expect("valid token settings");
    let outbound_auth::AuthConfig::Local(jwt) = auth else {
        unreachable!("AUTH_MODE is local")
    };
    let scopes: Vec<&str> = scopes.iter().map(String::as_str).collect();
    let mut groups = Scope::role_groups(&scopes);
    if !member && !groups.contains(&ADMINS) {
        groups.insert(0, ADMINS);
    }
    println!("{}", jwt.issue_with(&tenant, 24 * 3600, &scopes, &groups));
}
