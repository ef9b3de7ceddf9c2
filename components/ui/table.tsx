import type { ReactNode } from "react";

export interface Column<T> {
  label: string;
  cell: (row: T) => ReactNode;
  /** A test id for this column's cells. */
  testId?: string;
}

/**
 * Every table on a page: a header of column names and one row per item. Each cell carries its column's name, so on a
 * phone the rows stack into labelled cards instead of scrolling sideways.
 */
export function Table<T>({
  columns,
  rows,
  rowKey,
  rowProps,
  testId,
}: {
  columns: Column<T>[];
  rows: T[];
  rowKey: (row: T) => string;
  rowProps?: (row: T) => Record<`data-${string}`, string>;
  testId?: string;
}) {
  return (
    <table className="stack" data-testid={testId}>
      <thead>
        <tr>
          {columns.map((column) => (
            <th key={column.label}>{column.label}</th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => (
          <tr key={rowKey(row)} {...rowProps?.(row)}>
            {columns.map((column) => (
              <td key={column.label} data-label={column.label} data-testid={column.testId}>
                {column.cell(row)}
              </td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}
