//! `make token TENANT=acme [ROLE=admin|operator] [SCOPES="outbound/read outbound/write"]`:
//! prints a development access token for the tenant, valid for 24 hours, whose `scope` claim
//! holds the scopes given (any scopes, space or comma separated, D25; none by default). A scope
//! that makes a role (`outbound/admin`, `outbound/operator`; `ROLE` adds it) comes with its
//! group in `cognito:groups` (`admins`, `operators`), as Cognito gives a member of that group
//! (D29).
//!
//! Usage: `dev-token [TENANT [SCOPE...]]`.

fn main() {
    let mut args = std::env::args().skip(1);
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
    println!("{}", jwt.issue_scoped(&tenant, 24 * 3600, &scopes));
}
