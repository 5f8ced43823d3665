"""Plot helpers and paper-versus-reproduced comparison rows for the figure notebooks."""
