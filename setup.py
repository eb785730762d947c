"""Builds the package with its compiled translation catalogues: the ``.mo`` files
are made from the ``.po`` sources here (and by ``make setup``), not kept in git,
so ``pip install .`` on a fresh machine serves German pages too."""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildWithCatalogues(build_py):
    def run(self):
        from babel.messages.mofile import write_mo
        from babel.messages.pofile import read_po

        for source in Path(__file__).parent.glob("pbm/translations/*/LC_MESSAGES/messages.po"):
            with source.open("rb") as po:
                catalogue = read_po(po)
            with source.with_suffix(".mo").open("wb") as mo:
                write_mo(mo, catalogue)
        super().run()


setup(cmdclass={"build_py": BuildWithCatalogues})
