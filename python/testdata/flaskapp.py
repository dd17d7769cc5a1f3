"""A small Flask application (Debian python3-flask), for python/wsgi_test.go
and the benchmark."""

import os

from flask import Flask, jsonify, request

app = Flask(__name__)


@app.route("/")
def hello():
    return "hello from flask\n"


@app.route("/pid")
def pid():
    return str(os.getpid())


@app.route("/form", methods=["POST"])
def form():
    return jsonify(name=request.form.get("name"), size=len(request.get_data()))


@app.route("/user/<name>")
def user(name):
    return jsonify(user=name, agent=request.headers.get("User-Agent", ""))
