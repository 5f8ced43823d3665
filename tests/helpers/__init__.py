"""Plain helper modules of the tests, imported explicitly (``from tests.helpers.mpi import ...``).

``conftest.py`` files hold only fixtures; what a test calls lives here.
"""
