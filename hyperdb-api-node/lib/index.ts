/**
 * hyperdb-api for Node.js: start hyperd, create `.hyper` files, and stream
 * rows, columns and Arrow in and out. See the README for a quick start.
 */
export { HyperProcess, type HyperProcessOptions } from './process'
export {
  Connection,
  type CommandOptions,
  type ConnectOptions,
  type CreateMode,
  type ArrowQueryOptions,
  type QueryOptions,
  type RowQueryOptions,
} from './connection'
export { GrpcConnection, type GrpcConnectOptions } from './grpc'
export {
  Catalog,
  SqlType,
  type ColumnDefinition,
  type QualifiedName,
  type TableDefinition,
  type TableName,
} from './catalog'
export { HyperError, ErrorCode, type HyperErrorFields } from './errors'
export { HyperTimestamp, HyperTime, HyperInterval, HyperNumeric, HyperDate, numeric, dateOnly } from './values'
export type { ParamValue } from './params'
export type { ArrowInsertData } from './arrow-input'
export { Inserter, DEFAULT_BATCH_ROWS, type InserterOptions, type InsertRow } from './inserter'
export type { ColumnValues, InsertColumnsOptions } from './column-input'
export type {
  ColumnChunk,
  ColumnKind,
  ColumnVector,
  ColumnVectorOf,
  HyperValue,
  ResultColumn,
  RowArray,
  RowMode,
  RowObject,
  ValueOptions,
  VectorValues,
} from './columns'
