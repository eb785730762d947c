"""A session's pending changes written without the ORM's flush where they allow it
(``write_changes``; ``planned`` and ``write_planned`` when the writes are worked out
before a lock is taken): a move changes one versioned board row, and the flush's
unit of work costs more than the row's UPDATE. Used by ``pbm.db`` and the unit of work."""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy import Table, and_, bindparam, update
from sqlalchemy.engine import Connection
from sqlalchemy.orm import NO_VALUE, Mapper
from sqlalchemy.orm.attributes import instance_state
from sqlalchemy.orm.exc import StaleDataError
from sqlalchemy.sql.expression import Executable
from sqlmodel import Session

from . import driver_sql


def write_changes(session: Session) -> None:
    """``session.flush()``, the common case written directly: when the only pending
    changes are to loaded objects of versioned mappings (a move changes one board
    row and nothing else the ORM holds), each is one Core ``UPDATE ... WHERE id = :id
    AND version = :version`` of its changed columns, as the ORM's flush writes it,
    ``StaleDataError`` as there when the row's version moved on; the ORM's flush
    machinery (its unit of work, about a twentieth of a move) is not set up for it.
    Anything else is flushed by the ORM."""
    connection = session.connection()
    changes = planned(session, connection.dialect)
    if changes is None:
        session.flush()
    else:
        write_planned(connection, changes, session)


@dataclass(frozen=True)
class Change:
    """One loaded, versioned object's write, worked out (``planned``): its UPDATE made
    ready, or None when no column differs."""

    state: object
    version_key: str
    update: driver_sql.Prepared | None
    new_version: object
    table: str


def planned(session: Session, dialect) -> list[Change] | None:
    """The writes ``write_changes`` would do without the ORM's flush, made ready to run
    (so a writer holding a lock only runs them, ``write_planned``); None when the
    session's pending changes need the flush (a new or deleted object, a change to an
    object of an unversioned mapping)."""
    dirty = [instance_state(changed) for changed in session.dirty]
    if session.new or session.deleted or not all(state.mapper.version_id_col is not None for state in dirty):
        return None
    return [_change(state, dialect) for state in dirty]


def write_planned(connection: Connection, changes: list[Change], session: Session) -> None:
    """Run the writes ``planned`` made ready, in the transaction of ``connection``, and
    mark each object clean in the session, as its flush would."""
    for change in changes:
        values = change.state.dict
        if change.update is not None:
            if driver_sql.run(connection, change.update) != 1:
                raise StaleDataError(f"UPDATE statement on table '{change.table}' expected to update 1 "
                                     "row(s); 0 were matched.")
            values[change.version_key] = change.new_version
        change.state._commit_all(values, session.identity_map)  # as a flush leaves it: clean, nothing pending
        session._register_altered([change.state])  # a savepoint rolled back over this write expires it, as a flush


@dataclass(frozen=True)
class _Versioned:
    """What writing a versioned mapping's rows needs of it, worked out once."""

    table: Table
    id_key: str  # the attribute of its primary key
    version_key: str  # the attribute of its version column
    columns: dict[str, str]  # attribute -> column name
    updates: dict[tuple[str, ...], Executable] = field(default_factory=dict)  # changed attributes -> UPDATE

    @classmethod
    def of(cls, mapper: Mapper) -> "_Versioned":
        known = _VERSIONED.get(mapper)
        if known is None:
            (primary_key,) = mapper.primary_key
            known = _VERSIONED[mapper] = cls(
                mapper.local_table, mapper.get_property_by_column(primary_key).key,
                mapper.get_property_by_column(mapper.version_id_col).key,
                {prop.key: prop.columns[0].key for prop in mapper.column_attrs})
        return known

    def update(self, changed: tuple[str, ...]) -> Executable:
        """The UPDATE of the ``changed`` attributes, built once for each such set."""
        statement = self.updates.get(changed)
        if statement is None:
            table, column = self.table, self.columns
            statement = self.updates[changed] = update(table).where(and_(
                table.c[column[self.id_key]] == bindparam("pbm_id"),
                table.c[column[self.version_key]] == bindparam("pbm_version"),
            )).values({column[self.version_key]: bindparam("pbm_new_version"),
                       **{column[key]: bindparam(column[key]) for key in changed}})
        return statement


_VERSIONED: dict[Mapper, _Versioned] = {}


def _change(state, dialect) -> Change:
    """The write of one loaded, versioned object's changed columns (see ``write_changes``)."""
    mapper, values = state.mapper, state.dict
    mapped = _Versioned.of(mapper)
    changed = tuple(key for key, before in state.committed_state.items()
                    if key != mapped.version_key and (before is NO_VALUE or values[key] != before))
    if not changed:  # the ORM writes nothing (and keeps the version) when nothing differs
        return Change(state, mapped.version_key, None, None, mapped.table.name)
    version = values[mapped.version_key]
    new_version = mapper.version_id_generator(version)
    params = {mapped.columns[key]: values[key] for key in changed}
    params.update(pbm_id=values[mapped.id_key], pbm_version=version, pbm_new_version=new_version)
    return Change(state, mapped.version_key, driver_sql.prepare(dialect, mapped.update(changed), params),
                  new_version, mapped.table.name)
