//! `make token`: the `dev-token` binary mints a development access token for the tenant named,
//! with the scopes given space or comma separated (D25), and the group of a role's scope (D29).

use outbound_auth::AuthConfig;

fn mint(args: &[&str]) -> serde_json::Map<String, serde_json::Value> {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_dev-token"))
        .args(args)
        .env_remove("JWT_SECRET")
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let token = String::from_utf8(output.stdout).unwrap();
    let lookup = |name: &str| match name {
        "AUTH_MODE" => Some("local".to_owned()),
        "OUTBOUND_DEV_STACK" => Some("true".to_owned()),
        _ => None,
    };
    let AuthConfig::Local(jwt) = AuthConfig::from_lookup(&lookup).unwrap() else {
        panic!("local mode")
    };
    jwt.verify(token.trim()).unwrap()
}

#[test]
fn tokens_carry_the_tenant_the_scopes_and_the_roles_groups() {
    let plain = mint(&["acme"]);
    assert_eq!(plain["tenant_id"], "acme");
    assert_eq!(plain["token_use"], "access");
    assert!(!plain.contains_key("scope"));
    assert_eq!(
        plain["cognito:groups"],
        serde_json::json!(["admins"]),
        "D32"
    );
    let member = mint(&["--member", "acme"]);
    assert!(!member.contains_key("cognito:groups"));

    let scoped = mint(&[
        "globex",
        "outbound/read,outbound/operator",
        "outbound/write",
    ]);
    assert_eq!(scoped["tenant_id"], "globex");
    assert_eq!(
        scoped["scope"],
        "outbound/read outbound/operator outbound/write"
    );
    assert_eq!(
        scoped["cognito:groups"],
        serde_json::json!(["admins", "operators"])
    );
    let member_operator = mint(&["--member", "globex", "outbound/operator"]);
    assert_eq!(
        member_operator["cognito:groups"],
        serde_json::json!(["operators"])
    );
}
