"""The move path's Core writes run on the driver's cursor (``execute``): each
statement compiled once per dialect and set of parameters, its values put through
the column types' bind processors as SQLAlchemy does, then handed to the DB-API
cursor of the connection's transaction. SQLAlchemy's execution around a cached
statement (an execution context, its result object, parameter processing in
general form) cost several times the driver's own work for these one-row INSERTs
and UPDATEs; what it does that matters here is kept: the ``before_cursor_execute``
and ``after_cursor_execute`` events (the SQLite write guard, tests and the
benchmark see every statement) and a failure raised as SQLAlchemy's wrapped error
(``IntegrityError`` for a repeated Message-ID), the connection invalidated when
the database went away."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from sqlalchemy.engine import Connection, Dialect
from sqlalchemy.sql.expression import Executable


_GIVEN = object()  # a parameter the caller gives (the others are the statement's own values)


@dataclass(frozen=True)
class _Compiled:
    sql: str
    names: tuple[str, ...]  # the parameters in the statement's order
    positional: bool  # the driver takes a sequence (SQLite's qmark), else a mapping (psycopg's pyformat)
    processors: tuple[Callable | None, ...]  # each name's bind processor, or None
    fixed: tuple[object, ...]  # each name's value written in the statement (``.values(status="sent")``), or _GIVEN


_COMPILED: dict[tuple[int, Dialect, tuple[str, ...], bool], tuple[Executable, _Compiled]] = {}


def _compiled(statement: Executable, dialect: Dialect, names: tuple[str, ...], many: bool) -> _Compiled:
    key = (id(statement), dialect, names, many)
    known = _COMPILED.get(key)
    if known is not None and known[0] is statement:
        return known[1]
    compiled = statement.compile(dialect=dialect, column_keys=list(names), for_executemany=many)
    order = tuple(compiled.positiontup) if compiled.positional else tuple(compiled.binds)
    fixed = []
    for name in order:
        bind = compiled.binds.get(name)
        if name in names:
            fixed.append(_GIVEN)
        elif bind is not None and not bind.required and bind.callable is None and not bind.expanding:
            fixed.append(bind.value)
        else:  # a column default, a computed or an expanding parameter: SQLAlchemy's execution is for those
            raise ValueError(f"driver_sql: the statement's parameter {name!r} is neither given nor fixed")
    processors = compiled._bind_processors
    made = _Compiled(compiled.string, order, compiled.positional, tuple(processors.get(n) for n in order),
                     tuple(fixed))
    _COMPILED[key] = (statement, made)  # the statement kept: its id is not reused while it lives
    return made


def _values(compiled: _Compiled, params: dict):
    values = [value if process is None else process(value) for value, process in zip(
        [params[name] if fixed is _GIVEN else fixed for name, fixed in zip(compiled.names, compiled.fixed)],
        compiled.processors)]
    return values if compiled.positional else dict(zip(compiled.names, values))


@dataclass(frozen=True)
class Prepared:
    """A write ready for the cursor (``prepare``): compiled, its values put through the
    column types' bind processors."""

    compiled: _Compiled
    values: object  # a sequence or mapping, or a list of them for an executemany
    many: bool


def prepare(dialect: Dialect, statement: Executable, params: dict | list[dict]) -> Prepared | None:
    """The Core INSERT or UPDATE ``statement`` with ``params`` (one mapping, or a list
    of mappings with the same keys for an executemany) made ready to run on a
    connection of ``dialect`` (``run``); None for an empty list, which writes
    nothing. Every bound parameter must be given (no column defaults)."""
    many = isinstance(params, list)
    if many and not params:
        return None
    first = params[0] if many else params
    compiled = _compiled(statement, dialect, tuple(sorted(first)), many)
    return Prepared(compiled, [_values(compiled, p) for p in params] if many else _values(compiled, params), many)


def run(connection: Connection, prepared: Prepared) -> int:
    """Run a prepared write in the transaction of ``connection``; the driver's row count."""
    return _on_cursor(connection, prepared.compiled, prepared.values, prepared.many, lambda cursor: cursor.rowcount)


def run_sql(connection: Connection, sql: str) -> None:
    """Run a statement of plain SQL without parameters (``BEGIN IMMEDIATE``) on the
    connection's cursor, its events dispatched as for every other statement here."""
    _on_cursor(connection, _Compiled(sql, (), True, (), ()), (), False, lambda cursor: None)


def execute(connection: Connection, statement: Executable, params: dict | list[dict]) -> int:
    """``prepare`` and ``run`` at once: the driver's row count (0 for an empty list)."""
    prepared = prepare(connection.dialect, statement, params)
    return 0 if prepared is None else run(connection, prepared)


def rows(connection: Connection, statement: Executable, params: dict) -> list[tuple]:
    """The rows of the Core SELECT ``statement`` with ``params``, as plain tuples of
    the values SQLAlchemy would return (the column types' result processing applied:
    a UTC datetime, a bool), in the transaction of ``connection``."""
    compiled = _compiled(statement, connection.dialect, tuple(sorted(params)), False)

    def fetched(cursor) -> list[tuple]:
        processors = _result_processors(compiled, statement, connection.dialect, cursor)
        found = cursor.fetchall()
        if not any(processors):
            return [tuple(row) for row in found]
        return [tuple(value if process is None else process(value) for value, process in zip(row, processors))
                for row in found]
    return _on_cursor(connection, compiled, _values(compiled, params), False, fetched)


_RESULTS: dict[tuple[int, Dialect], tuple] = {}  # (id of a _Compiled, dialect) -> its columns' result processors


def _result_processors(compiled: _Compiled, statement: Executable, dialect: Dialect, cursor) -> tuple:
    key = (id(compiled), dialect)
    known = _RESULTS.get(key)
    if known is None:  # the cursor's description only now: psycopg builds it anew at every reading
        columns = statement.compile(dialect=dialect)._result_columns
        known = _RESULTS[key] = tuple(column.type._cached_result_processor(dialect, described[1])
                                      for column, described in zip(columns, cursor.description))
    return known


def _on_cursor(connection: Connection, compiled: _Compiled, values, many: bool, done: Callable):
    """Run the compiled statement on a cursor of the connection's DB-API connection,
    its events dispatched and a failure raised as SQLAlchemy raises it; ``done(cursor)``
    is the answer."""
    cursor = connection.connection.cursor()
    try:
        if connection._has_events or connection.engine._has_events:
            for listen in connection.dispatch.before_cursor_execute:
                listen(connection, cursor, compiled.sql, values, None, many)
        if many:
            cursor.executemany(compiled.sql, values)
        else:
            cursor.execute(compiled.sql, values)
        if connection._has_events or connection.engine._has_events:
            for listen in connection.dispatch.after_cursor_execute:
                listen(connection, cursor, compiled.sql, values, None, many)
        return done(cursor)
    except BaseException as error:
        connection._handle_dbapi_exception(error, compiled.sql, values, cursor, None)
        raise  # not reached: the call above raises the wrapped error
    finally:
        cursor.close()
