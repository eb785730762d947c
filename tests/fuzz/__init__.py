"""Hostile mail, generated: the strategies and the figures shared by the CI suite
(``tests/test_hostile_mail.py``) and the long run (``make fuzz``)."""
