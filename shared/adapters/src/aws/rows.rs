//! How many items a DynamoDB call touched: what a request costs the table beside its number of
//! calls, weighed by the request limiter (D32). A Query or Scan counts the items it read
//! (`ScannedCount`: those a filter then dropped included, since DynamoDB read them), a read of
//! keys the items it found, a write the items it names. Other services' calls touch none.

use aws_sdk_dynamodb::operation::{
    batch_get_item::BatchGetItemOutput, batch_write_item::BatchWriteItemInput,
    delete_item::DeleteItemInput, get_item::GetItemOutput, put_item::PutItemInput,
    query::QueryOutput, scan::ScanOutput, transact_get_items::TransactGetItemsOutput,
    transact_write_items::TransactWriteItemsInput, update_item::UpdateItemInput,
};
use aws_smithy_runtime_api::client::interceptors::context::{Input, Output};

/// The items a call's input writes (0 for anything but a DynamoDB write).
pub(super) fn written(input: &Input) -> u64 {
    if input.downcast_ref::<PutItemInput>().is_some()
        || input.downcast_ref::<UpdateItemInput>().is_some()
        || input.downcast_ref::<DeleteItemInput>().is_some()
    {
        return 1;
    }
    if let Some(batch) = input.downcast_ref::<BatchWriteItemInput>() {
        let requests = batch
            .request_items()
            .into_iter()
            .flat_map(|tables| tables.values());
        return requests.map(|requests| requests.len() as u64).sum();
    }
    if let Some(transaction) = input.downcast_ref::<TransactWriteItemsInput>() {
        return transaction.transact_items().len() as u64;
    }
    0
}

/// The items a call's answer says it read (0 for anything but a DynamoDB read).
pub(super) fn read(output: &Output) -> u64 {
    let count = |n: i32| u64::try_from(n).unwrap_or(0);
    if let Some(query) = output.downcast_ref::<QueryOutput>() {
        return count(query.scanned_count);
    }
    if let Some(scan) = output.downcast_ref::<ScanOutput>() {
        return count(scan.scanned_count);
    }
    if let Some(get) = output.downcast_ref::<GetItemOutput>() {
        return u64::from(get.item.is_some());
    }
    if let Some(batch) = output.downcast_ref::<BatchGetItemOutput>() {
        let tables = batch.responses.iter().flat_map(|tables| tables.values());
        return tables.map(|items| items.len() as u64).sum();
    }
    if let Some(transaction) = output.downcast_ref::<TransactGetItemsOutput>() {
        return transaction.responses().len() as u64;
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;
    use aws_sdk_dynamodb::types::{AttributeValue, Put, TransactWriteItem};

    #[test]
    fn writes_count_the_items_they_name_and_reads_the_items_they_read() {
        let put = || {
            let item = [("pk".to_owned(), AttributeValue::S("a".into()))].into();
            let put = Put::builder().table_name("t").set_item(Some(item));
            TransactWriteItem::builder()
                .put(put.build().unwrap())
                .build()
        };
        let transaction = TransactWriteItemsInput::builder()
            .transact_items(put())
            .transact_items(put())
            .transact_items(put())
            .build()
            .unwrap();
        assert_eq!(written(&Input::erase(transaction)), 3);
        let update = UpdateItemInput::builder().table_name("t").build().unwrap();
        assert_eq!(written(&Input::erase(update)), 1);
        let query = QueryOutput::builder().scanned_count(250).count(3).build();
        assert_eq!(
            read(&Output::erase(query)),
            250,
            "filtered-out items were read too"
        );
        let missed = GetItemOutput::builder().build();
        assert_eq!(read(&Output::erase(missed)), 0);
        assert_eq!(read(&Output::erase("not DynamoDB's")), 0);
    }
}
