//! Data source endpoints (D1, D3, D5, D6, D11).

use crate::support::TestApi;
use serde_json::json;

#[tokio::test]
async fn add_then_detail_and_list() {
    let api = TestApi::start().await;
    let added = api
        .post(
            "acme",
            "/api/dataSource/add",
            json!({"dataSourceName": "  Spring leads ", "dataSourceDesc": "from the fair"}),
        )
        .await;
    let data = added.ok();
    assert_eq!(data["dataSourceName"], "Spring leads");
    assert_eq!(data["dataSourceDesc"], "from the fair");
    assert_eq!(data["contactCount"], 0);
    let id = data["id"].as_str().unwrap();
    let detail = api
        .get("acme", &format!("/api/dataSource/detail/{id}"))
        .await;
    assert_eq!(detail.ok(), data);
    let list = api.get("acme", "/api/dataSource/list").await;
    assert_eq!(list.ok()["total"], 1);
    assert_eq!(list.ok()["rows"][0], *data);
    assert!(added.headers.contains_key("x-request-id"));
}
