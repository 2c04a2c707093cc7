# Settings of the Django application (proxy/testdata/django/app.py), made
# in code from the command line: host, port, user, password, database,
# and optionally the connection's OPTIONS as JSON.
import json
import sys

_, HOST, PORT, USER, PASSWORD, NAME = sys.argv[:6]
SECRET_KEY = "shardflake-test"
USE_TZ = True
INSTALLED_APPS = ["django.contrib.contenttypes", "django.contrib.auth", "shop"]
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.mysql",
        "HOST": HOST,
        "PORT": PORT,
        "USER": USER,
        "PASSWORD": PASSWORD,
        "NAME": NAME,
        "OPTIONS": json.loads(sys.argv[6]) if len(sys.argv) > 6 else {},
    }
}
