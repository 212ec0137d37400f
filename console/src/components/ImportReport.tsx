import type { ImportReport } from '../api/types';

/** The counts and the refused rows of an import (D8). */
export function ImportReportView({ report }: { report: ImportReport }) {
  return (
    <section class="report" aria-labelledby="import-report-heading">
      <h3 id="import-report-heading">Import report</h3>
      <div class="table-wrap">
        <table>
          <caption class="visually-hidden">Import counts</caption>
          <tbody>
            <tr>
              <th scope="row">Rows read</th>
              <td class="num">{report.importCount}</td>
            </tr>
            <tr>
              <th scope="row">Imported</th>
              <td class="num">{report.successCount}</td>
            </tr>
            <tr>
              <th scope="row">Failed</th>
              <td class="num">{report.failCount}</td>
            </tr>
          </tbody>
        </table>
      </div>
      {report.details.length > 0 ? (
        <div class="table-wrap">
          <table>
            <caption>Refused rows</caption>
            <thead>
              <tr>
                <th scope="col" class="num">Row</th>
                <th scope="col">Phone number</th>
                <th scope="col">Reason</th>
              </tr>
            </thead>
            <tbody>
              {report.details.map((d) => (
                <tr key={`${d.row}-${d.phoneNumber}`}>
                  <td class="num">{d.row}</td>
                  <td>{d.phoneNumber}</td>
                  <td>{d.reason}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : (
        <p class="muted">Every row was imported.</p>
      )}
    </section>
  );
}
